@_spi(Kernel) import Simulator

/// A value written to one field by an intent.
package struct FieldWrite: Hashable, Sendable {
  package var field: Int32
  package var value: Value
  package init(field: Int32, value: Value) {
    self.field = field
    self.value = value
  }
}

/// What a user did.
package enum IntentKind: Hashable, Sendable {
  case create(type: Int32, values: [FieldWrite])
  case set([FieldWrite])
  case append(field: Int32, text: String)
  /// `removed` are the characters the replacement took out, as found on the device.
  case replace(field: Int32, old: String, new: String, removed: [AtomID])
  case delete

  package var verb: String {
    switch self {
    case .create: "create"
    case .set: "set"
    case .append: "append"
    case .replace: "replace"
    case .delete: "delete"
    }
  }

  /// The type a create makes; nil for the other kinds.
  package var createdType: Int32? {
    if case .create(let type, _) = self { type } else { nil }
  }
}

/// One user intent, as the oracle sees it: who, when (true time and the device's clock), what,
/// and its causal context. `a → b` iff both are on one record and `b`'s device had received
/// `a` when it made `b` (``happenedBefore(_:)``).
package struct Intent: Hashable, Sendable {
  package var id: IntentID
  package var device: Int32
  package var trueTime: VirtualTime
  package var deviceTime: VirtualTime
  package var record: RecordKey
  package var kind: IntentKind
  /// 1-based position among the effective intents on ``record``; 0 for an ignored intent.
  package var ordinal: Int32
  /// Exactly which intents on ``record`` the device had received (applied, or overwritten by
  /// this very edit) when it made the intent, itself included, as ordinals.
  package var context: CausalContext
  /// Why the intent had no effect (the record was not on the device, the text was not found),
  /// or nil. Ignored intents are reported but never judged.
  package var ignored: String?
  /// For an intent a schema's delete rule made (a cascade's delete, a nullify's clearing): the
  /// delete intent that set it off; 0 for the user's own intent.
  package var trigger: IntentID = 0
  /// For a delete the engine's de-duplication made (`unique=dedupe`): the duplicate the device
  /// kept instead. Nil for every other intent. The oracles do not count it as a user's delete.
  package var keptInstead: RecordKey?

  /// An intent as made (its ordinal and context are filled in when the world logs it).
  package init(
    id: IntentID, device: Int32, trueTime: VirtualTime, deviceTime: VirtualTime, record: RecordKey, kind: IntentKind, ordinal: Int32,
    context: CausalContext, ignored: String?
  ) {
    self.id = id
    self.device = device
    self.trueTime = trueTime
    self.deviceTime = deviceTime
    self.record = record
    self.kind = kind
    self.ordinal = ordinal
    self.context = context
    self.ignored = ignored
  }

  /// Whether this intent happened before `other` (`self → other`): both are on one record, and
  /// `other`'s device had received this one when it made `other`. Causality is tracked per
  /// record: intents on different records are never ordered.
  @inlinable
  package func happenedBefore(_ other: Intent) -> Bool {
    ordinal > 0 && id != other.id && record == other.record && other.context.contains(ordinal)
  }

  /// Neither happened before the other (and they are not the same intent).
  @inlinable
  package func isConcurrent(with other: Intent) -> Bool {
    id != other.id && !happenedBefore(other) && !other.happenedBefore(self)
  }

  /// The fields this intent writes.
  package var writtenFields: [Int32] {
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
package struct IntentLog: Sendable {
  package private(set) var intents: [Intent] = []
  /// `(record, ordinal)` per intent, kept apart so the hot path reads them without copying an
  /// intent (its arrays would be retained and released).
  @usableFromInline var _origins: [(record: RecordKey, ordinal: Int32)] = []
  /// Effective intents so far per record (indexed by key).
  @usableFromInline var _ordinals: [Int32] = []
  /// How many intents had no effect (``Intent/ignored`` is set).
  package private(set) var ignoredCount = 0
  package init() {}

  package var nextID: IntentID { IntentID(intents.count + 1) }

  /// Records with intents so far: keys `0..<recordCount` (some may have none).
  package var recordCount: Int { _ordinals.count }

  /// The ordinal the next effective intent on `record` gets.
  @inlinable
  package func nextOrdinal(on record: RecordKey) -> Int32 {
    Int(record) < _ordinals.count ? _ordinals[Int(record)] + 1 : 1
  }

  /// Makes room for `count` more intents (no regrowth while they are appended).
  package mutating func reserve(_ count: Int) {
    intents.reserveCapacity(intents.count + count)
    _origins.reserveCapacity(_origins.count + count)
  }

  package mutating func append(_ intent: Intent) {
    precondition(intent.id == nextID, "intent ids must be dense")
    // A device can only have received intents made before this one: the oracle's causal
    // questions rest on it (`Oracle+Causality.swift`).
    assert(intent.context._max <= max(intent.ordinal, 0), "a causal context holds an ordinal above the intent's own")
    if intent.ordinal > 0 {
      precondition(intent.ordinal == nextOrdinal(on: intent.record), "intent ordinals must be dense per record")
      let r = Int(intent.record)
      _ordinals._grow(toHold: r, with: 0)
      _ordinals[r] = intent.ordinal
    }
    if intent.ignored != nil { ignoredCount += 1 }
    intents.append(intent)
    _origins.append((intent.record, intent.ordinal))
  }

  @inlinable package subscript(id: IntentID) -> Intent { intents[Int(id) - 1] }

  /// The record and per-record ordinal of an intent (ordinal 0: ignored).
  @inlinable package func origin(_ id: IntentID) -> (record: RecordKey, ordinal: Int32) { _origins[Int(id) - 1] }

  /// The causal context of an intent (what its device had received on its record).
  @inlinable package func context(of id: IntentID) -> CausalContext { intents[Int(id) - 1].context }
}
