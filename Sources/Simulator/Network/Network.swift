/// A node on the simulated network: a device or the server.
@frozen
@_spi(Kernel) public struct NodeID: Hashable, Comparable, Sendable, CustomStringConvertible {
  /// The node's number: its position in the order nodes were added, from 0.
  public var rawValue: Int32
  /// The node numbered `rawValue`.
  @inlinable public init(_ rawValue: Int32) { self.rawValue = rawValue }
  /// The node at position `index` (truncated to 32 bits).
  @inlinable public init(index: Int) { self.rawValue = Int32(truncatingIfNeeded: index) }
  /// The node's position, for indexing per-node arrays.
  @inlinable public var index: Int { Int(rawValue) }
  @inlinable public static func < (a: NodeID, b: NodeID) -> Bool { a.rawValue < b.rawValue }
  public var description: String { "node\(rawValue)" }
}

/// The faults a network applies to every message.
@_spi(Kernel) public struct NetworkConditions: Hashable, Sendable {
  /// How long each copy of a message takes, drawn per copy (so messages reorder).
  public var latency: LatencyModel
  /// The chance that a message leaving its sender is lost.
  public var loss: Probability
  /// The chance that a message that was not lost arrives a second time, with its own latency.
  public var duplication: Probability

  /// Conditions; by default a fixed 50 ms latency, no loss and no duplication.
  public init(latency: LatencyModel = .fixed(.milliseconds(50)), loss: Probability = .never, duplication: Probability = .never) {
    self.latency = latency
    self.loss = loss
    self.duplication = duplication
  }
}

/// Why a message did not arrive.
@_spi(Kernel) public enum DropReason: UInt8, Hashable, Sendable, CustomStringConvertible {
  case senderOffline, receiverOffline, senderDown, receiverDown, lost
  public var description: String {
    switch self {
    case .senderOffline: "sender-offline"
    case .receiverOffline: "receiver-offline"
    case .senderDown: "sender-down"
    case .receiverDown: "receiver-down"
    case .lost: "lost"
    }
  }
}

/// What the network decided for one message at send time. Deliver each copy at its time, after
/// asking ``Network/accepts(_:)`` whether the receiver can still take it.
@frozen
@_spi(Kernel) public struct Transmission: Hashable, Sendable {
  /// The sending node.
  public var from: NodeID
  /// The receiving node.
  public var to: NodeID
  /// When the message arrives; `nil` if it was dropped at once.
  public var arrival: VirtualTime?
  /// When a duplicate arrives, if the network duplicated it.
  public var duplicateArrival: VirtualTime?
  /// Why it was dropped at once, if it was.
  public var dropped: DropReason?
  /// The receiver's connectivity epoch at send time: if the receiver goes offline (or down)
  /// before delivery, the epoch changes and the message is dropped in flight.
  public var receiverEpoch: UInt32

  /// A transmission with every field given; ``Network/send(from:to:at:using:)`` is what makes them.
  @inlinable
  public init(from: NodeID, to: NodeID, arrival: VirtualTime?, duplicateArrival: VirtualTime?, dropped: DropReason?, receiverEpoch: UInt32) {
    self.from = from
    self.to = to
    self.arrival = arrival
    self.duplicateArrival = duplicateArrival
    self.dropped = dropped
    self.receiverEpoch = receiverEpoch
  }
}

/// Counters of what the network did.
@_spi(Kernel) public struct NetworkStats: Hashable, Sendable {
  /// Messages handed to ``Network/send(from:to:at:using:)``, dropped ones included.
  public var sent = 0
  /// Copies the receiver took (``Network/accepts(_:)`` returned true), duplicates included.
  public var delivered = 0
  /// Messages the network sent twice.
  public var duplicated = 0
  /// Messages lost at random (``NetworkConditions/loss``).
  public var lost = 0
  /// Messages dropped at send because the sender or the receiver was offline.
  public var droppedOffline = 0
  /// Messages dropped at send because the sender or the receiver was down.
  public var droppedDown = 0
  /// Copies dropped at delivery: the receiver went offline or down after they were sent.
  public var droppedInFlight = 0
  /// Every counter at zero.
  public init() {}
}

/// The simulated network: nodes that are online or offline (airplane mode) and up or down (a
/// server outage), and per-message latency, loss and duplication. Messages reorder through
/// independent delays. The network decides a message's fate; its owner carries the message in
/// its own event queue and asks ``accepts(_:)`` at delivery time.
///
///     var net = Network(conditions: NetworkConditions(latency: .uniform(.milliseconds(20), .milliseconds(300))))
///     let phone = net.addNode()
///     let server = net.addNode()
///     var rng = SimRandom(seed: 1, stream: "network")
///     let t = net.send(from: phone, to: server, at: .zero, using: &rng)
///     // schedule delivery at t.arrival; then `if net.accepts(t) { ... }`
///
/// A node that is offline sends and receives nothing; messages in flight to it are dropped when
/// it goes offline, even if it comes back before they would have arrived.
@_spi(Kernel) public struct Network: Sendable {
  /// The latency, loss and duplication applied to every message sent from now on.
  public var conditions: NetworkConditions
  /// What the network has done so far.
  public var stats: NetworkStats { _stats }
  @usableFromInline var _stats = NetworkStats()
  @usableFromInline var _online: [Bool] = []
  @usableFromInline var _up: [Bool] = []
  @usableFromInline var _epoch: [UInt32] = []

  /// A network with no nodes yet, under `conditions`.
  public init(conditions: NetworkConditions = NetworkConditions()) {
    self.conditions = conditions
  }

  /// Adds a node, online and up.
  public mutating func addNode() -> NodeID {
    _online.append(true)
    _up.append(true)
    _epoch.append(0)
    return NodeID(index: _online.count - 1)
  }

  /// How many nodes have been added.
  public var nodeCount: Int { _online.count }

  /// Whether the node is online (airplane mode off); an offline node sends and receives nothing.
  @inlinable public func isOnline(_ node: NodeID) -> Bool { _online[node.index] }
  /// Whether the node is up (not in an outage); a down node sends and receives nothing.
  @inlinable public func isUp(_ node: NodeID) -> Bool { _up[node.index] }
  /// Online and up: can send and receive.
  @inlinable public func isReachable(_ node: NodeID) -> Bool { _online[node.index] && _up[node.index] }

  /// Airplane mode off (`true`) or on (`false`). Going offline drops messages in flight to it.
  public mutating func setOnline(_ node: NodeID, _ online: Bool) {
    if _online[node.index] && !online { _epoch[node.index] &+= 1 }
    _online[node.index] = online
  }

  /// Outage (`false`) or recovery (`true`). Going down drops messages in flight to it.
  public mutating func setUp(_ node: NodeID, _ up: Bool) {
    if _up[node.index] && !up { _epoch[node.index] &+= 1 }
    _up[node.index] = up
  }

  /// Decides the fate of one message sent now. Draws from `rng` only for a message that leaves
  /// the sender, always in the same order (loss, latency, duplication, duplicate latency).
  @inlinable
  public mutating func send(from: NodeID, to: NodeID, at now: VirtualTime, using rng: inout SimRandom) -> Transmission {
    _stats.sent &+= 1
    var t = Transmission(from: from, to: to, arrival: nil, duplicateArrival: nil, dropped: nil, receiverEpoch: _epoch[to.index])
    if !_online[from.index] {
      t.dropped = .senderOffline
    } else if !_up[from.index] {
      t.dropped = .senderDown
    } else if !_online[to.index] {
      t.dropped = .receiverOffline
    } else if !_up[to.index] {
      t.dropped = .receiverDown
    }
    if let reason = t.dropped {
      _count(reason)
      return t
    }
    if rng.chance(conditions.loss) {
      t.dropped = .lost
      _stats.lost &+= 1
      return t
    }
    t.arrival = now + conditions.latency.sample(&rng)
    if rng.chance(conditions.duplication) {
      t.duplicateArrival = now + conditions.latency.sample(&rng)
      _stats.duplicated &+= 1
    }
    return t
  }

  /// Whether the receiver can take a message now: it is online and up, and has not been offline
  /// or down at any moment since the message was sent. Counts the delivery or the drop.
  @inlinable
  public mutating func accepts(_ t: Transmission) -> Bool {
    let i = t.to.index
    if _online[i] && _up[i] && _epoch[i] == t.receiverEpoch {
      _stats.delivered &+= 1
      return true
    }
    _stats.droppedInFlight &+= 1
    return false
  }

  @usableFromInline
  mutating func _count(_ reason: DropReason) {
    switch reason {
    case .senderOffline, .receiverOffline: _stats.droppedOffline &+= 1
    case .senderDown, .receiverDown: _stats.droppedDown &+= 1
    case .lost: _stats.lost &+= 1
    }
  }
}
