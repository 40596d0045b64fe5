@_spi(Kernel) import Simulator

/// What the oracle needs to know about each device that the device itself never reads: exactly
/// which intents of each record it has received (its causal contexts), which records vanished
/// from its view, and which deletes it has applied. Kept by the world, fed by the device's
/// effects (``DeviceEffect/took(_:)``, ``DeviceEffect/shown(_:visible:)``) and by its intents —
/// never by a policy.
package struct CausalLedger: Sendable {
  /// Per record (indexed by key): exactly which of its intents the device has received — made,
  /// or taken in with a copy of the record (with what their devices had received of it). The
  /// causal context of the device's next intent on that record.
  package private(set) var knowledge: [CausalContext] = []
  /// Records that were visible and then vanished (membership only; never iterated).
  var vanished: Set<RecordKey> = []
  /// Per record, the delete intents the device has applied: made itself, or taken in with a
  /// deleted copy (membership only; never iterated).
  var appliedDeletes: [RecordKey: [IntentID]] = [:]
  /// Per record created again after a delete, the latest incarnation (creating intent) the
  /// device made or took in: a deleted copy of an earlier one is no delete of what it shows.
  var incarnations: [RecordKey: IntentID] = [:]

  package init() {}

  /// What the device had received of `key`'s intents.
  package func context(of key: RecordKey) -> CausalContext {
    Int(key) < knowledge.count ? knowledge[Int(key)] : CausalContext()
  }

  /// Makes room for the contexts of records below `count`.
  mutating func reserve(records count: Int) { knowledge.reserveCapacity(count) }

  mutating func _grow(_ key: RecordKey) {
    let r = Int(key)
    knowledge._grow(toHold: r, with: CausalContext())
  }

  /// An intent the device made: an effective one gets the record's next ordinal and, when
  /// `tracking`, its causal context (everything received of the record, itself included).
  /// `applied`: whether the app on the device applied it (a purge in Settings is the user's
  /// intent, but the app learns of it later).
  mutating func made(_ intent: inout Intent, ordinal: Int32, tracking: Bool, applied: Bool = true) {
    guard intent.ignored == nil else { return }
    intent.ordinal = ordinal
    if tracking {
      _grow(intent.record)
      knowledge[Int(intent.record)].insert(ordinal)
      intent.context = knowledge[Int(intent.record)]
    }
    if applied, case .delete = intent.kind { _noteDelete(intent.id, on: intent.record) }
  }

  /// A copy the device took in: every intent it carries, and what their devices had received of
  /// the record when they made them (contexts are closed: knowing an intent means knowing its
  /// context already).
  mutating func took(_ copy: RecordState, log: IntentLog) {
    copy.forEachProvenance { id in
      let (key, ordinal) = log.origin(id)
      guard ordinal > 0 else { return }
      _grow(key)
      // The context of `id` holds `id` itself, which this device did not have.
      // (Read in place in the log: no copy of the context.)
      if !knowledge[Int(key)].contains(ordinal) { knowledge[Int(key)].formUnion(holdingNew: log._contexts[Int(id) - 1]) }
    }
    if copy.isDeleted, incarnations.isEmpty || copy.creator >= incarnations[copy.key] ?? 0 { _noteDelete(copy.deletedBy, on: copy.key) }
  }

  /// What the user sees changed. Returns the deletes applied so far when a record that had
  /// vanished became visible again (a reappearance), else nil.
  mutating func shown(_ key: RecordKey, visible: Bool) -> [IntentID]? {
    guard visible else {
      vanished.insert(key)
      return nil
    }
    return vanished.contains(key) ? appliedDeletes[key] ?? [] : nil
  }

  /// A record created again (by the intent `creator`, made here or taken in with a copy): the
  /// deletes applied here that were made without knowing that create were of an earlier
  /// incarnation, and its showing is no reappearance.
  mutating func newIncarnation(of key: RecordKey, creator: IntentID, log: IntentLog) {
    incarnations[key] = max(incarnations[key] ?? 0, creator)
    if let applied = appliedDeletes[key] {
      let ordinal = log.origin(creator).ordinal
      guard ordinal > 0, applied.allSatisfy({ !log.context(of: $0).contains(ordinal) }) else { return }
      appliedDeletes[key] = nil
    }
    vanished.remove(key)
  }

  mutating func _noteDelete(_ id: IntentID, on key: RecordKey) {
    guard id != 0 else { return }
    if let seen = appliedDeletes[key] {
      if !seen.contains(id) { appliedDeletes[key]!.append(id) }
    } else {
      appliedDeletes[key] = [id]
    }
  }
}
