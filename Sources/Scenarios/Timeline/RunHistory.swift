import Replica
import Simulator

/// A run's full trace read back into what people look at: intents, every message from its send
/// to each copy's delivery or drop, the server's decisions, offline windows, outages, background
/// windows, kills and settle. Shared by ``TimelineSVG`` and ``Explanation``.
///
/// Pairing relies on the `message` and `arrival` annotations (`WorldTrace`), which carry a
/// message number; a server decision (`server-store`) belongs to the message delivered to the
/// server just before it.
struct RunHistory {
  /// What became of one copy of a message.
  struct End {
    var time: VirtualTime
    /// 1 delivered, 0 refused by the receiver, -1 cut off at the sender, ≤ -2 dropped when sent.
    var outcome: Int64
    var duplicate: Bool

    var delivered: Bool { outcome == 1 }
    var droppedAtSend: Bool { outcome <= -2 }

    /// What became of the copy, in words: `delivered at 1.100s`, `lost by the network at 2.000s`,
    /// `cut off at 3.100s: iPad had abandoned the request (killed, suspended or offline)`.
    func fate(from: String, to: String, at time: String) -> String {
      switch outcome {
      case 1: return "delivered at \(time)"
      case 0: return "dropped at \(time): \(to == "server" ? "the server went down" : to + " went offline") while it was in flight"
      case -1: return "cut off at \(time): \(from) had abandoned the request (killed, suspended or offline)"
      default:
        let reason = DropReason(rawValue: UInt8(clamping: -outcome - 2)) ?? .lost
        switch reason {
        case .senderOffline: return "dropped at \(time): \(from) was offline"
        case .senderDown: return "dropped at \(time): the server was down"
        case .receiverOffline: return "dropped at \(time): \(to) was offline"
        case .receiverDown: return "dropped at \(time): the server was down"
        case .lost: return "lost by the network at \(time)"
        }
      }
    }
  }

  struct Message {
    var seq: Int
    /// `Message.code`: 1 push, 2 push-reply, 3 fetch, 4 fetch-reply, 5 notify.
    var code: Int64
    var from: Int
    var to: Int
    var sent: VirtualTime
    var detail: MessageDetail
    var ends: [End] = []
    /// The server's decisions on a delivered push, one per write.
    var stores: [Store] = []

    var name: String { MessageDetail.kindName(code) }
    /// The first copy to be delivered, if any.
    var delivery: End? { ends.first(where: \.delivered) }
  }

  /// What the server did with one write.
  struct Store {
    var time: VirtualTime
    var key: RecordKey
    /// 1 saved, 2 conflict, 3 refused (deleted), 4 deleted, 5 rejected.
    var outcome: Int64
    var isDelete: Bool
    var detail: StoreDetail
    /// The device whose push it was.
    var device: Int
    var seq: Int
  }

  enum WindowKind: Int, Comparable {
    case offline, down, background, settle
    static func < (a: WindowKind, b: WindowKind) -> Bool { a.rawValue < b.rawValue }
  }

  /// A span of time on one lane.
  struct Window {
    var node: Int
    var kind: WindowKind
    var start: VirtualTime
    var end: VirtualTime
    var label: String
  }

  enum MarkKind {
    case kill, clockJump(SimDuration), fact(DeviceFact)
    /// The server forgot a deletion after the retention window (at the first request after it).
    case purged(RecordKey, deletedAt: VirtualTime)
  }

  /// A moment on one lane.
  struct Mark {
    var node: Int
    var time: VirtualTime
    var kind: MarkKind
  }

  let world: SyncWorld
  let names: Names
  var intents: [Intent] = []
  var messages: [Message] = []
  var windows: [Window] = []
  var marks: [Mark] = []
  var settleStart: VirtualTime?
  var settleEnd: VirtualTime?
  var end: VirtualTime = .zero
  /// Whether the run kept its full trace (else only intents and facts are known).
  var hasTrace: Bool
  /// Index in ``messages`` by message number.
  var bySeq: [Int: Int] = [:]
  /// Index in ``messages`` of each request, by `"device:code:request id"`.
  var requests: [String: Int] = [:]

  var deviceCount: Int { world.devices.count }
  var serverNode: Int { world.devices.count }

  init(_ result: ScenarioRunner.Result) {
    world = result.world
    names = Names(world: result.world, recordNames: result.recordNames)
    hasTrace = !result.world.trace.records.isEmpty
    intents = world.log.intents
    _read(world.trace.records)
    for e in world.facts.events { marks.append(Mark(node: Int(e.device), time: e.time, kind: .fact(e.fact))) }
    _findPurges()
    end = max(end, world.now)
  }

  mutating func _read(_ records: [TraceRecord]) {
    var lastAtServer: Int?
    var offlineSince: [VirtualTime?] = Array(repeating: nil, count: deviceCount + 1)
    var backgroundSince: [(VirtualTime, SimDuration)?] = Array(repeating: nil, count: deviceCount)
    func closeBackground(_ d: Int, at t: VirtualTime, _ w: inout [Window]) {
      guard let (start, budget) = backgroundSince[d] else { return }
      w.append(Window(node: d, kind: .background, start: start, end: min(start + budget, t), label: "background \(budget)"))
      backgroundSince[d] = nil
    }
    for r in records {
      end = max(end, r.time)
      let node = Int(r.node)
      switch r.kind {
      case WorldTrace.message:
        bySeq[Int(r.a)] = messages.count
        let m = Message(seq: Int(r.a), code: r.b, from: node, to: Int(r.c), sent: r.time, detail: MessageDetail(r.detail ?? ""))
        if m.code == 1 || m.code == 3, let id = m.detail.request { requests["\(m.from):\(m.code):\(id)"] = messages.count }
        messages.append(m)
      case WorldTrace.arrival:
        guard let i = bySeq[Int(r.a)] else { continue }
        messages[i].ends.append(End(time: r.time, outcome: r.b, duplicate: r.c == 1))
        if node == serverNode, r.b == 1 { lastAtServer = i }
      case WorldTrace.store:
        guard let i = lastAtServer else { continue }
        messages[i].stores.append(Store(
          time: r.time, key: RecordKey(r.a), outcome: r.b, isDelete: r.c == 1, detail: StoreDetail(r.detail ?? ""),
          device: messages[i].from, seq: messages[i].seq))
      case WorldTrace.intent:
        if node < deviceCount { closeBackground(node, at: r.time, &windows) }
      case WorldTrace.lifecycle:
        switch r.a {
        case 1:
          marks.append(Mark(node: node, time: r.time, kind: .kill))
          if node < deviceCount { closeBackground(node, at: r.time, &windows) }
        case 2:
          if node < deviceCount {
            closeBackground(node, at: r.time, &windows)
            backgroundSince[node] = (r.time, SimDuration(nanoseconds: r.b))
          }
        case 3:
          marks.append(Mark(node: node, time: r.time, kind: .clockJump(SimDuration(nanoseconds: r.b))))
        case 5, 7:
          if offlineSince[node] == nil { offlineSince[node] = r.time }
        case 4, 6:
          if let since = offlineSince[node] {
            windows.append(Window(node: node, kind: node == serverNode ? .down : .offline, start: since, end: r.time, label: node == serverNode ? "server down" : "offline"))
            offlineSince[node] = nil
          }
        default:
          break
        }
      case WorldTrace.settle:
        if r.a == 0 {
          settleStart = r.time
          // Settle heals every fault: every device online, the server up, every app foreground.
          for n in offlineSince.indices {
            guard let since = offlineSince[n] else { continue }
            windows.append(Window(node: n, kind: n == serverNode ? .down : .offline, start: since, end: r.time, label: n == serverNode ? "server down" : "offline"))
            offlineSince[n] = nil
          }
          for d in 0..<deviceCount { closeBackground(d, at: r.time, &windows) }
        } else {
          settleEnd = r.time
        }
      default:
        break
      }
    }
    for n in offlineSince.indices {
      guard let since = offlineSince[n] else { continue }
      windows.append(Window(node: n, kind: n == serverNode ? .down : .offline, start: since, end: end, label: n == serverNode ? "server down" : "offline"))
    }
    for d in 0..<deviceCount { closeBackground(d, at: .distantFuture, &windows) }
    if let s = settleStart {
      windows.append(Window(node: -1, kind: .settle, start: s, end: max(settleEnd ?? end, s), label: "settle"))
    }
    windows.sort { ($0.start, $0.node, $0.kind) < ($1.start, $1.node, $1.kind) }
  }

  /// A deletion is purged at the first request the server handles once the retention window has
  /// passed, unless the record changed again first (`ServerState.purge`).
  mutating func _findPurges() {
    let retention = world.config.policy.settings.retention
    let arrivals = messages.flatMap { m in m.to == serverNode ? m.ends.filter(\.delivered).map(\.time) : [] }.sorted()
    let all = stores
    for (i, s) in all.enumerated() where s.outcome == 4 {
      let due = s.time + retention
      guard let at = arrivals.first(where: { $0 >= due }) else { continue }
      if all[(i + 1)...].contains(where: { $0.key == s.key && $0.time <= at && $0.outcome != 4 }) { continue }
      marks.append(Mark(node: serverNode, time: at, kind: .purged(s.key, deletedAt: s.time)))
    }
  }

  /// Every server decision, in time order.
  var stores: [Store] { messages.flatMap(\.stores) }

  /// The message with number `seq`.
  func message(_ seq: Int) -> Message? { bySeq[seq].map { messages[$0] } }
}

/// Names of nodes, records and fields, for people.
struct Names {
  let deviceNames: [String]
  let recordNames: [String]
  let schema: Schema
  /// Record type per key (from the create intents).
  let types: [RecordKey: Int32]

  init(world: SyncWorld, recordNames: [String]) {
    deviceNames = world.config.deviceNames
    self.recordNames = recordNames
    schema = world.config.schema
    var types: [RecordKey: Int32] = [:]
    for i in world.log.intents {
      if case .create(let t, _) = i.kind, types[i.record] == nil { types[i.record] = t }
    }
    self.types = types
  }

  func node(_ n: Int) -> String { n >= 0 && n < deviceNames.count ? deviceNames[n] : "server" }
  func record(_ key: RecordKey) -> String { key >= 0 && Int(key) < recordNames.count ? recordNames[Int(key)] : "r\(key)" }
  func field(_ key: RecordKey, _ f: Int) -> String {
    guard let t = types[key], Int(t) < schema.types.count, f >= 0, f < schema.types[Int(t)].fields.count else { return "f\(f)" }
    return schema.types[Int(t)].fields[f].name
  }
  func fieldIndex(_ key: RecordKey, named name: String) -> Int? {
    types[key].flatMap { Int($0) < schema.types.count ? schema.types[Int($0)].fieldIndex(named: name) : nil }
  }
  func key(_ record: String) -> RecordKey? { recordNames.firstIndex(of: record).map { RecordKey($0) } }
}
