import Replica
@_spi(Kernel) import Simulator

/// The oracle: what a run lost, judged from the intent log, provenance and the final states
/// only — never from a policy's stamps, change tags or decisions — so a buggy policy cannot hide
/// its own loss.
///
///     let anomalies = Oracle(world: world, recordNames: names).judge()
package struct Oracle {
  let world: SyncWorld
  let recordNames: [String]
  let schema: Schema
  /// Names and descriptions.
  let words: Vocabulary
  let log: IntentLog
  /// Effective intents per record, in id order.
  var byRecord: [[Intent]] = []
  var anomalies: [Anomaly] = []
  /// Writes to the record being judged that a delete of it had seen (see `judgeFields`).
  var superseded: Set<IntentID> = []
  /// Whether the devices ran a user's app: its merges are its own code, not a policy axis, and
  /// explanations say so.
  package var judgesAnApp = false
  /// Whether the run settled and every device shows exactly what the server shows (set by
  /// ``judge()``).
  package internal(set) var converged = false

  package init(world: SyncWorld, recordNames: [String]) {
    self.world = world
    self.recordNames = recordNames
    self.schema = world.config.schema
    self.log = world.log
    self.words = Vocabulary(world: world, recordNames: recordNames)
    // A de-duplication's delete (`unique=dedupe`) is the engine's, not the user's: judged apart
    // (``deduplicationLoss(_:_:)``).
    // A write the server refused for lack of permission, which its device took back and told
    // the user of, did not happen for anyone (`oracle.md`, Access): it is judged no further.
    let withdrawn = world.hasSharing ? Self.withdrawnWrites(world) : []
    for intent in log.intents where intent.ignored == nil && intent.keptInstead == nil {
      if !withdrawn.isEmpty, withdrawn.contains(intent.id) { continue }
      let r = Int(intent.record)
      byRecord._grow(toHold: r, with: [])
      byRecord[r].append(intent)
    }
  }

  /// The intents refused with `permissionFailure` that their device reverted and reported, and
  /// those still pending when their device's account lost access to the record and the device
  /// removed it: made before that on that device, of such a record, and never taken by the
  /// server (received and refused as a conflict counts as not taken).
  static func withdrawnWrites(_ world: SyncWorld) -> Set<IntentID> {
    var out: Set<IntentID> = []
    for e in world.facts.events {
      let keys: [RecordKey]
      switch e.fact {
      case .permissionRefused(let refused, true): keys = refused
      // The share left the device with its access: what was still pending of it went too, and
      // the app was told (the zone left its shared database).
      case .accessEnded(let removed, _): keys = removed
      default: continue
      }
      for i in world.log.intents where i.device == e.device && i.id <= IntentID(e.intentsBefore) && keys.contains(i.record) {
        // (Unless the server took it: saved it, or applied it as a delete.)
        if !world.facts.takenByServer.contains(i.id) { out.insert(i.id) }
      }
    }
    return out
  }

  /// The server's live copy of a record (nil when it has none, or a tombstone).
  func serverLive(_ key: RecordKey) -> RecordState? {
    world.serverRecord(key).flatMap { $0.isDeleted ? nil : $0 }
  }

  /// Every anomaly, in a stable order: by kind, then record, then field, then first intent.
  package mutating func judge() -> [Anomaly] {
    anomalies = []
    for (k, intents) in byRecord.enumerated() where !intents.isEmpty {
      let key = RecordKey(k)
      if world.context.isRecreated(key) {
        judgeIncarnations(key, intents)
        continue
      }
      judgeRecordPresence(key, intents)
      if let record = serverLive(key) { judgeFields(record, intents) }
    }
    judgeTransientResurrections()
    judgeLiveness()
    judgeAccess()
    judgeAssets()
    judgeDivergence()
    judgeReferences()
    judgeCascades()
    judgeUniqueness()
    return anomalies.sorted { a, b in
      (a.kind, a.record?.name ?? "", a.field?.name ?? "", a.intents.first?.description ?? "")
        < (b.kind, b.record?.name ?? "", b.field?.name ?? "", b.intents.first?.description ?? "")
    }
  }

  // MARK: Names

  func name(_ key: RecordKey) -> String { words.record(key) }
  func recordRef(_ key: RecordKey) -> RecordRef { RecordRef(key: key, name: words.record(key)) }
  func deviceName(_ d: Int32) -> String { words.device(d) }
  func deviceRef(_ d: Int32) -> DeviceRef { DeviceRef(index: d, name: words.device(d)) }
  func fieldName(_ type: Int32, _ field: Int32) -> String { schema.types[Int(type)].fields[Int(field)].name }
  static func id(_ i: IntentID) -> IntentRef { IntentRef(i) }
  func render(_ value: Value) -> String { words.render(value) }
  func quote(_ s: String) -> String { words.quote(s) }
  func describe(_ intent: Intent, field: Int32? = nil) -> String { words.describe(intent, field: field) }

  func concurrent(_ a: Intent, _ b: Intent) -> Bool { a.isConcurrent(with: b) }

  /// Whether the intent reached the server (``WorldFacts/reachedServer``).
  func reachedServer(_ i: Intent) -> Bool {
    Int(i.id) < world.facts.reachedServer.count && world.facts.reachedServer[Int(i.id)]
  }

  /// `its device gave up on its upload after zoneBusy at 3.2s (retry=never), and nobody was told`.
  static func gaveUpCause(_ error: CloudKitError, told: Bool, at time: VirtualTime) -> String {
    told
      ? "its device gave up on its upload after \(error) at \(time), which retrying cannot fix, and told the user"
      : "its device gave up on its upload after \(error) at \(time), "
        + (error.isTransient ? "a transient error it treated as permanent (retry=never)" : "an error it did not handle (retry=never)")
        + ", and nobody was told: the app shows it synced"
  }

  /// `its device deleted its local data, this change still unsent, when the iCloud account changed at 5.000s (account=wipe)`.
  func wipedCause(at time: VirtualTime) -> String {
    judgesAnApp
      ? "the app's code on its device dropped this change, still unsent, on an iCloud account change (found gone when that account signed in again at \(time))"
      : "its device deleted its local data, this change still unsent, when the iCloud account changed at \(time) (account=wipe)"
  }

  /// How a device's reaction to a zone deletion is named: the policy's axis, or the app's code.
  var zoneReaction: String { judgesAnApp ? "the app's code" : "zone-deleted=\(world.config.policy.settings.zoneDeleted)" }

  /// `iPad set it aside with account alice when it signed out (account=keep): …`.
  func setAsideCause(_ account: Int32, device: Int32) -> String {
    "\(deviceName(device)) set it aside, unsent, with account \(words.account(account)) when that account left the device (account=keep); it is uploaded only if that account signs in there again"
  }

  /// `it is still waiting in iPad's outbox: the sync stalled on requestRateLimited (see stalled-sync)`.
  static func stalledCause(_ error: CloudKitError?, device: String) -> String {
    "it is still waiting in \(device)'s outbox: the sync stalled" + (error.map { " on \($0)" } ?? "") + " (see stalled-sync)"
  }

  /// Why an edit was never sent, when its device's outbox dropped it unsent: the edit never
  /// reached the server, and after it was made its device lost the record's pending upload (an
  /// in-memory outbox killed, a mark-first batch cut off, a rejected type). Nil otherwise — an
  /// edit that a device-side merge replaced before it was sent is judged like any other write.
  func neverSentCause(_ i: Intent) -> String? {
    guard !reachedServer(i) else { return nil }
    for e in world.facts.events where e.device == i.device && e.intentsBefore >= i.id {
      switch e.fact {
      case .outboxLost(let keys) where keys.contains(i.record):
        return "its pending upload was in an in-memory outbox, lost when the app was killed at \(e.time) (outbox=memory)"
      case .batchAbandoned(let keys, let cause) where keys.contains(i.record):
        return "its outbox entry was cleared when the batch was sent (unit=mark-first) and the request was cut off at \(e.time) (\(cause))"
      case .rejected(i.record, let typeName):
        return "the server rejected its type \(typeName) at \(e.time)"
      case .gaveUp(let keys, let error, let told) where keys.contains(i.record):
        return gaveUpCause(error, told: told, at: e.time, key: i.record, device: e.device)
      case .stalled(let keys, let error) where keys.contains(i.record):
        return Self.stalledCause(error, device: deviceName(e.device))
      case .wipedOnAccountChange(let keys) where keys.contains(i.record):
        return wipedCause(at: e.time)
      case .setAside(let keys, let account) where keys.contains(i.record):
        return setAsideCause(account, device: e.device)
      case .appDropped(let keys, let cause) where keys.contains(i.record):
        return Self.appDropCause(cause, at: e.time, key: i.record)
      case .permissionRefused(let keys, let reverted) where keys.contains(i.record):
        return
          "the server refused it with permissionFailure at \(e.time) (\(words.account(world.deviceAccount(Int(e.device)) ?? 0)) may not write it: read-only on the share)"
          + (reverted
            ? ", and its device took the server's record back and told the user"
            : "; its device dropped the change and still shows it saved" + (judgesAnApp ? "" : " (permission-failure=ignore)"))
      default:
        continue
      }
    }
    // A change made after its device gave up on the record for good (told the user: the
    // record's upload is marked failed) waits with it, never sent.
    if world.facts.heldByGiveUp.contains(i.id) {
      for e in world.facts.events.reversed() where e.device == i.device && e.intentsBefore < i.id {
        if case .gaveUp(let keys, let error, true) = e.fact, keys.contains(i.record) {
          return "its device no longer saves \(name(i.record)): " + gaveUpCause(error, told: true, at: e.time, key: i.record, device: e.device)
        }
        if case .rejected(i.record, let typeName) = e.fact {
          return "its device no longer saves \(name(i.record)): the server rejected its type \(typeName) at \(e.time)"
        }
      }
    }
    return nil
  }

  /// Why a user's app never sent a change it still showed (``AppDropCause``), in words; with
  /// `delete`, why its pending delete never went (in a resurrection's sentence).
  /// `key`: the record the sentence is about (nil: several, as a picture's label says them).
  static func appDropCause(_ cause: AppDropCause, at time: VirtualTime, delete: Bool = false, key: RecordKey? = nil) -> String {
    let pending = delete ? "the pending delete" : "its pending change"
    let showing = delete ? "" : ", while still showing the change"
    switch cause {
    case .notPersistedBeforeKill(let killed, let updated):
      let what = delete ? "the delete" : "this change"
      let sentence = "the app was killed at \(killed) before its engine's state with \(what) pending was on disk, and relaunched without it"
      if delete { return sentence }
      // Whether a stateUpdate had carried the change: if so the app did not persist it; if not,
      // the kill fell in the engine's ~100 ms before one, and only the app's own rows can tell.
      if key.map({ updated.contains($0) }) ?? !updated.isEmpty {
        return sentence + " (a stateUpdate had carried it: the app persists every stateUpdate's stateSerialization, or loses what it has not sent)"
      }
      return sentence
        + " (within the ~100 ms before the engine's stateUpdate would have carried it: an app that must not lose such a change re-adds, at launch, the rows that differ from their last known server record)"
    case .clearedInFlight:
      return "the app's code took the acknowledgement of an earlier save of the record, at \(time), for "
        + (delete ? "the delete" : "this change, made while that save was on its way") + ", and cleared it"
    case .afterError(let code):
      return "the app's code dropped \(pending) after \(code) at \(time)\(showing)"
    case .removed:
      return "the app's code removed \(pending) at \(time)\(showing)"
    }
  }
}
