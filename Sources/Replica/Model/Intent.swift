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
  /// The stored properties, shared between copies until one is changed: an intent is read
  /// far more often than it is changed (the oracle reads each many times), and a copy is then
  /// one retain rather than one per array and string it holds. Exclusivity is not checked at
  /// run time: storage is only changed through a uniquely referenced copy.
  @usableFromInline final class Storage: @unchecked Sendable {
    @exclusivity(unchecked) @usableFromInline var id: IntentID
    @exclusivity(unchecked) @usableFromInline var device: Int32
    @exclusivity(unchecked) @usableFromInline var trueTime: VirtualTime
    @exclusivity(unchecked) @usableFromInline var deviceTime: VirtualTime
    @exclusivity(unchecked) @usableFromInline var record: RecordKey
    @exclusivity(unchecked) @usableFromInline var kind: IntentKind
    @exclusivity(unchecked) @usableFromInline var ordinal: Int32
    @exclusivity(unchecked) @usableFromInline var context: CausalContext
    @exclusivity(unchecked) @usableFromInline var ignored: String?
    @exclusivity(unchecked) @usableFromInline var trigger: IntentID
    @exclusivity(unchecked) @usableFromInline var keptInstead: RecordKey?
    @inlinable
    init(
      id: IntentID, device: Int32, trueTime: VirtualTime, deviceTime: VirtualTime, record: RecordKey, kind: IntentKind, ordinal: Int32,
      context: CausalContext, ignored: String?, trigger: IntentID, keptInstead: RecordKey?
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
      self.trigger = trigger
      self.keptInstead = keptInstead
    }
    @inlinable func copy() -> Storage {
      Storage(
        id: id, device: device, trueTime: trueTime, deviceTime: deviceTime, record: record, kind: kind, ordinal: ordinal, context: context,
        ignored: ignored, trigger: trigger, keptInstead: keptInstead)
    }
  }

  @usableFromInline var _s: Storage

  /// Gives this copy storage of its own before it is changed.
  @inlinable mutating func _makeUnique() {
    if !isKnownUniquelyReferenced(&_s) { _s = _s.copy() }
  }

  /// The intent's id (`i1`, `i2`, …).
  @inlinable package var id: IntentID {
    get { _s.id }
    _modify {
      _makeUnique()
      yield &_s.id
    }
  }
  /// The device that made it (rank).
  @inlinable package var device: Int32 {
    get { _s.device }
    _modify {
      _makeUnique()
      yield &_s.device
    }
  }
  /// When it was made, in true time.
  @inlinable package var trueTime: VirtualTime {
    get { _s.trueTime }
    _modify {
      _makeUnique()
      yield &_s.trueTime
    }
  }
  /// When it was made, by the device's clock.
  @inlinable package var deviceTime: VirtualTime {
    get { _s.deviceTime }
    _modify {
      _makeUnique()
      yield &_s.deviceTime
    }
  }
  /// The record it is on.
  @inlinable package var record: RecordKey {
    get { _s.record }
    _modify {
      _makeUnique()
      yield &_s.record
    }
  }
  /// What it did.
  @inlinable package var kind: IntentKind {
    get { _s.kind }
    _modify {
      _makeUnique()
      yield &_s.kind
    }
  }
  /// Whether it is a delete (asked without copying the kind or comparing payloads).
  @inlinable package var isDelete: Bool {
    if case .delete = _s.kind { return true }
    return false
  }
  /// 1-based position among the effective intents on ``record``; 0 for an ignored intent.
  @inlinable package var ordinal: Int32 {
    get { _s.ordinal }
    _modify {
      _makeUnique()
      yield &_s.ordinal
    }
  }
  /// Exactly which intents on ``record`` the device had received (applied, or overwritten by
  /// this very edit) when it made the intent, itself included, as ordinals.
  @inlinable package var context: CausalContext {
    get { _s.context }
    _modify {
      _makeUnique()
      yield &_s.context
    }
  }
  /// Why the intent had no effect (the record was not on the device, the text was not found),
  /// or nil. Ignored intents are reported but never judged.
  @inlinable package var ignored: String? {
    get { _s.ignored }
    _modify {
      _makeUnique()
      yield &_s.ignored
    }
  }
  /// For an intent a schema's delete rule made (a cascade's delete, a nullify's clearing): the
  /// delete intent that set it off; 0 for the user's own intent.
  @inlinable package var trigger: IntentID {
    get { _s.trigger }
    _modify {
      _makeUnique()
      yield &_s.trigger
    }
  }
  /// For a delete the engine's de-duplication made (`unique=dedupe`): the duplicate the device
  /// kept instead. Nil for every other intent. The oracles do not count it as a user's delete.
  @inlinable package var keptInstead: RecordKey? {
    get { _s.keptInstead }
    _modify {
      _makeUnique()
      yield &_s.keptInstead
    }
  }

  /// An intent as made (its ordinal and context are filled in when the world logs it).
  package init(
    id: IntentID, device: Int32, trueTime: VirtualTime, deviceTime: VirtualTime, record: RecordKey, kind: IntentKind, ordinal: Int32,
    context: CausalContext, ignored: String?
  ) {
    _s = Storage(
      id: id, device: device, trueTime: trueTime, deviceTime: deviceTime, record: record, kind: kind, ordinal: ordinal, context: context,
      ignored: ignored, trigger: 0, keptInstead: nil)
  }

  /// Property by property (copies that share storage are equal without reading it).
  package static func == (a: Intent, b: Intent) -> Bool {
    if a._s === b._s { return true }
    let x = a._s
    let y = b._s
    return x.id == y.id
      && x.device == y.device
      && x.trueTime == y.trueTime
      && x.deviceTime == y.deviceTime
      && x.record == y.record
      && x.kind == y.kind
      && x.ordinal == y.ordinal
      && x.context == y.context
      && x.ignored == y.ignored
      && x.trigger == y.trigger
      && x.keptInstead == y.keptInstead
  }

  /// Hashes every property, in declaration order.
  package func hash(into hasher: inout Hasher) {
    let x = _s
    hasher.combine(x.id)
    hasher.combine(x.device)
    hasher.combine(x.trueTime)
    hasher.combine(x.deviceTime)
    hasher.combine(x.record)
    hasher.combine(x.kind)
    hasher.combine(x.ordinal)
    hasher.combine(x.context)
    hasher.combine(x.ignored)
    hasher.combine(x.trigger)
    hasher.combine(x.keptInstead)
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
  /// The causal context of each intent, kept apart for the same reason: taking in a copy of a
  /// record reads the contexts of the intents it carries, in place.
  @usableFromInline var _contexts: [CausalContext] = []
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
    _contexts.reserveCapacity(_contexts.count + count)
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
    _contexts.append(intent.context)
  }

  @inlinable package subscript(id: IntentID) -> Intent { intents[Int(id) - 1] }

  /// The record and per-record ordinal of an intent (ordinal 0: ignored).
  @inlinable package func origin(_ id: IntentID) -> (record: RecordKey, ordinal: Int32) { _origins[Int(id) - 1] }

  /// The causal context of an intent (what its device had received on its record).
  @inlinable package func context(of id: IntentID) -> CausalContext { _contexts[Int(id) - 1] }
}
