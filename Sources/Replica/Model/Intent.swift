import Simulator

/// A value written to one field by an intent.
public struct FieldWrite: Hashable, Sendable {
  public var field: Int32
  public var value: Value
  public init(field: Int32, value: Value) {
    self.field = field
    self.value = value
  }
}

/// What a user did.
public enum IntentKind: Hashable, Sendable {
  case create(type: Int32, values: [FieldWrite])
  case set([FieldWrite])
  case append(field: Int32, text: String)
  /// `removed` are the characters the replacement took out, as found on the device.
  case replace(field: Int32, old: String, new: String, removed: [AtomID])
  case delete

  public var verb: String {
    switch self {
    case .create: "create"
    case .set: "set"
    case .append: "append"
    case .replace: "replace"
    case .delete: "delete"
    }
  }
}

/// A vector clock: for each device, how many of its intents are known.
public typealias VectorClock = [Int32]

/// One user intent, as the oracle sees it: who, when (true time and the device's clock), what,
/// and its causal context. `a → b` iff `b.context[a.device] >= a.sequence`.
public struct Intent: Hashable, Sendable {
  public var id: IntentID
  public var device: Int32
  public var trueTime: VirtualTime
  public var deviceTime: VirtualTime
  public var record: RecordKey
  public var kind: IntentKind
  /// 1-based count of this device's effective intents; 0 for an ignored intent.
  public var sequence: Int32
  /// What the device had received when it made the intent, including the intent itself.
  public var context: VectorClock
  /// Why the intent had no effect (the record was not on the device, the text was not found),
  /// or nil. Ignored intents are reported but never judged.
  public var ignored: String?

  /// Whether this intent happened before `other` (`self → other`).
  @inlinable
  public func happenedBefore(_ other: Intent) -> Bool {
    sequence > 0 && id != other.id && other.context.count > Int(device) && other.context[Int(device)] >= sequence
  }

  /// The fields this intent writes.
  public var writtenFields: [Int32] {
    switch kind {
    case .create(_, let values): values.map(\.field)
    case .set(let values): values.map(\.field)
    case .append(let f, _): [f]
    case .replace(let f, _, _, _): [f]
    case .delete: []
    }
  }
}

/// Every intent of a run, indexed by id (`intents[id - 1]`).
public struct IntentLog: Sendable {
  public private(set) var intents: [Intent] = []
  /// `(device, sequence)` per intent, kept apart so the hot path reads them without copying
  /// an intent (its arrays would be retained and released).
  @usableFromInline var _origins: [(device: Int32, sequence: Int32)] = []
  public init() {}

  public var nextID: IntentID { IntentID(intents.count + 1) }

  public mutating func append(_ intent: Intent) {
    precondition(intent.id == nextID, "intent ids must be dense")
    intents.append(intent)
    _origins.append((intent.device, intent.sequence))
  }

  @inlinable public subscript(id: IntentID) -> Intent { intents[Int(id) - 1] }

  /// The device and per-device sequence number of an intent.
  @inlinable public func origin(_ id: IntentID) -> (device: Int32, sequence: Int32) { _origins[Int(id) - 1] }

  /// Pointwise maximum of `clock` and the intent's causal context.
  @inlinable public func mergeContext(of id: IntentID, into clock: inout VectorClock) {
    let context = intents[Int(id) - 1].context
    for i in clock.indices where i < context.count && context[i] > clock[i] { clock[i] = context[i] }
  }
}
