@_spi(Kernel) import Simulator

/// What the oracle needs to know about each device that the device itself never reads: exactly
/// which intents of each record it has received (its causal contexts), which records vanished
/// from its view, and which deletes it has applied. Kept by the world, fed by the device's
/// effects (``DeviceEffect/took(_:)``, ``DeviceEffect/shown(_:visible:)``) and by its intents —
/// never by a policy.
package struct CausalLedger: Sendable {
  /// What the device had received of one record: the union of a context of its own and the
  /// contexts of up to two intents (`first`, `second`; 0: none).
  ///
  /// Contexts are closed — a device that has an intent has everything its device had of the
  /// record when it was made — so an intent's context holds another's exactly when it holds
  /// that intent's ordinal, and what a device has of a record is the union of the contexts of
  /// the few intents no other it has knows of (the latest version it took, and a write of its
  /// own or two that lost to concurrent ones). Kept as those intents' ids, taking in a newer
  /// version is storing an integer and asking an ordinal or two of the log's contexts — no
  /// union made, no storage shared and released, no walk over runs; a union is made only when
  /// a third such intent comes (the oldest is then folded into `own`).
  struct Entry: Sendable {
    var own = CausalContext()
    var first: IntentID = 0
    var second: IntentID = 0

    /// Whether the ordinal is in the union.
    @inline(__always)
    func contains(_ ordinal: Int32, _ log: IntentLog) -> Bool {
      own.contains(ordinal) || (first != 0 && log._contexts[Int(first) - 1].contains(ordinal))
        || (second != 0 && log._contexts[Int(second) - 1].contains(ordinal))
    }

    /// The union, made. (Each intent's context holds its own ordinal, which neither `own` nor
    /// the other intent's context holds: `add` keeps it so.)
    func context(_ log: IntentLog) -> CausalContext {
      var union = own
      if first != 0 { union.formUnion(holdingNew: log._contexts[Int(first) - 1]) }
      if second != 0 { union.formUnion(holdingNew: log._contexts[Int(second) - 1]) }
      return union
    }

    /// Adds `id`'s context, which holds an ordinal the union does not (`id`'s own).
    mutating func add(_ id: IntentID, _ log: IntentLog) {
      let theirs = log._contexts[Int(id) - 1]
      // Every part inside `id`'s context is no longer needed.
      if first != 0, theirs.contains(log.origin(first).ordinal) { first = 0 }
      if second != 0, theirs.contains(log.origin(second).ordinal) { second = 0 }
      if !own.isEmpty, own.isSubset(of: theirs) { own = CausalContext() }
      if first == 0 {
        first = id
      } else if second == 0 {
        second = id
      } else {
        own.formUnion(holdingNew: log._contexts[Int(first) - 1])
        first = second
        second = id
      }
    }
  }
  /// Per record (indexed by key): exactly which of its intents the device has received — made,
  /// or taken in with a copy of the record (with what their devices had received of it). The
  /// causal context of the device's next intent on that record.
  var _entries: [Entry] = []
  /// Records that were visible and then vanished (membership only; never iterated).
  var vanished = KeyBits()
  /// Of those, the ones whose last vanishing was at an account change of the device.
  var hiddenWithTheAccount = KeyBits()
  /// Per record, the delete intents the device has applied: made itself, or taken in with a
  /// deleted copy (membership only; never iterated).
  var appliedDeletes = KeyMap<[IntentID]>()
  /// Per record created again after a delete, the latest incarnation (creating intent) the
  /// device made or took in: a deleted copy of an earlier one is no delete of what it shows.
  var incarnations: [RecordKey: IntentID] = [:]

  package init() {}

  /// What the device had received of `key`'s intents.
  package func context(of key: RecordKey, log: IntentLog) -> CausalContext {
    guard Int(key) < _entries.count else { return CausalContext() }
    return _entries[Int(key)].context(log)
  }

  /// Reads what `took` will read first for each copy in `effects` — the entry of its record,
  /// the context of the entry's latest intent, the origin of each intent the copy carries —
  /// and returns a value made of them: see ``RecordTable/warm(_:)``.
  func warm(_ effects: [DeviceEffect], log: IntentLog) -> Int {
    var sum = 0
    _entries.withUnsafeBufferPointer { entries in
      log._origins.withUnsafeBufferPointer { origins in
        log._contexts.withUnsafeBufferPointer { contexts in
          for e in effects {
            guard case .took(let copy) = e else { continue }
            copy.forEachProvenance { id in
              if id > 0, Int(id) <= origins.count { sum &+= Int(origins[Int(id) - 1].ordinal) }
            }
            let r = Int(copy.key)
            guard r >= 0, r < entries.count else { continue }
            sum &+= Int(entries[r].own.prefix)
            let first = Int(entries[r].first)
            if first > 0, first <= contexts.count { sum &+= Int(contexts[first - 1].prefix) }
          }
        }
      }
    }
    return sum
  }

  /// Makes room for the contexts of records below `count`.
  mutating func reserve(records count: Int) { _entries.reserveCapacity(count) }

  mutating func _grow(_ key: RecordKey) {
    let r = Int(key)
    _entries._grow(toHold: r, with: Entry())
  }

  /// An intent the device made: an effective one gets the record's next ordinal and, when
  /// `tracking`, its causal context (everything received of the record, itself included).
  /// `applied`: whether the app on the device applied it (a purge in Settings is the user's
  /// intent, but the app learns of it later).
  /// The caller appends `intent` to `log` next.
  mutating func made(_ intent: inout Intent, ordinal: Int32, tracking: Bool, log: IntentLog, applied: Bool = true) {
    guard intent.ignored == nil else { return }
    intent.ordinal = ordinal
    if tracking {
      _grow(intent.record)
      let r = Int(intent.record)
      var context = _entries[r].context(log)
      context.insert(ordinal)
      intent.context = context
      // (What the device has of the record is now this intent's context, which the log keeps
      // from the next line of the caller on.)
      _entries[r] = Entry(first: intent.id)
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
      let r = Int(key)
      if r >= _entries.count { _grow(key) }
      // (Contexts read in place in the log: no copy of one.)
      if !_entries[r].contains(ordinal, log) { _entries[r].add(id, log) }
    }
    if copy.isDeleted, incarnations.isEmpty || copy.creator >= incarnations[copy.key] ?? 0 { _noteDelete(copy.deletedBy, on: copy.key) }
  }

  /// What the user sees changed. Returns the deletes applied so far when a record that had
  /// vanished became visible again (a reappearance), else nil. A record the device stopped
  /// showing `withTheAccount` (at the instant its iCloud account changed) went with the account,
  /// not with a delete: when it shows again no delete is returned (it comes back with the
  /// account, whatever the device had taken in).
  mutating func shown(_ key: RecordKey, visible: Bool, withTheAccount: Bool = false) -> [IntentID]? {
    guard visible else {
      vanished.insert(key)
      if withTheAccount { hiddenWithTheAccount.insert(key) } else { hiddenWithTheAccount.remove(key) }
      return nil
    }
    guard vanished.contains(key) else { return nil }
    return hiddenWithTheAccount.contains(key) ? [] : appliedDeletes[key] ?? []
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
