extension SyncWorld {
  /// Why device `d` cannot create `key` again, or nil when it can: a re-create is made on a
  /// device that does not show the record and has applied a delete of the incarnation it knew
  /// last (made it, or taken it in) — the user re-creates what they saw deleted. Two devices
  /// may each do so, neither knowing of the other's. (Without causality
  /// tracking, the world does not follow deletes: only what the device shows is checked.)
  func recreateRefusal(of key: RecordKey, device d: Int32) -> String? {
    if shows(device: Int(d), key) { return "it still exists on this device (a record is created again only after a delete of it)" }
    guard config.trackCausality else { return nil }
    // (Deletes applied here are forgotten when a later incarnation reaches the device.)
    guard ledgers[Int(d)].appliedDeletes[key]?.isEmpty == false else {
      return "this device has not seen it deleted (a record is created again only after a delete of it)"
    }
    return nil
  }

  /// Notes that `key` has more than one incarnation from now on: the server, the devices and the
  /// ledgers tell its copies apart by their creating intent.
  mutating func markRecreated(_ key: RecordKey) {
    guard !context.isRecreated(key) else { return }
    context.recreatedKeys._grow(toHold: Int(key), with: false)
    context.recreatedKeys[Int(key)] = true
    env.context = context
  }

  /// Device `d` took in `copy`: its ledger learns the intents it carries and, for a record
  /// created again, whether it is a later incarnation than the deletes it applied.
  mutating func ledgerTook(_ copy: RecordState, device d: Int32) {
    ledgers[Int(d)].took(copy, log: log)
    if !context.recreatedKeys.isEmpty, !copy.isDeleted, context.isRecreated(copy.key) {
      ledgers[Int(d)].newIncarnation(of: copy.key, creator: copy.creator, log: log)
    }
  }
}
