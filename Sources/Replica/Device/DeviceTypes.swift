@_spi(Kernel) import Simulator

/// What a user does on a device, with names already resolved to indices.
package enum UserIntent: Hashable, Sendable {
  case create(type: Int32, key: RecordKey, values: [FieldWrite])
  case set(key: RecordKey, values: [FieldWrite])
  case append(key: RecordKey, field: Int32, text: String)
  case replace(key: RecordKey, field: Int32, old: String, new: String)
  case delete(key: RecordKey)

  package var key: RecordKey {
    switch self {
    case .create(_, let k, _), .set(let k, _), .append(let k, _, _), .replace(let k, _, _, _), .delete(let k): k
    }
  }

  /// Where a create or set stands between a share and the account's own zone, given which
  /// records came from a share (`shared`): whether it refers across zones — a shared record and
  /// one of the account's own referring to each other, which CloudKit does not allow (references
  /// stay within a zone) — and whether a create is made in a share (it refers to a shared record).
  /// Both engines, the built-in one and a user's app's driver, refuse the crossing alike.
  package func zoneCrossing(shared: (RecordKey) -> Bool) -> (crosses: Bool, madeInShare: Bool) {
    let values: [FieldWrite]
    switch self {
    case .create(_, _, let v), .set(_, let v): values = v
    default: return (false, false)
    }
    var targets: [Bool] = []
    for w in values { if case .ref(let target) = w.value { targets.append(shared(target)) } }
    let here: Bool? = if case .set(let k, _) = self { shared(k) } else { targets.first }
    guard let here else { return (false, false) }
    let isCreate = if case .create = self { true } else { false }
    return (targets.contains { $0 != here }, isCreate && here)
  }

  /// Why a create or set that refers across zones (``zoneCrossing(shared:)``) is refused.
  package static let crossZoneReason =
    "a reference across zones: one record is in a share and the other in the account's own zone, and CloudKit references stay within a zone"
}

/// Device timers. Each kind has a generation; a timer from an older generation is ignored.
package enum TimerKind: Int, Hashable, Sendable, CaseIterable {
  case autosync, retry, timeout, apply, budget
  /// An app's engine posts `stateUpdate` (coalesced, shortly after its state changed).
  case stateUpdate
}

/// Where the app is in its lifecycle.
package enum Lifecycle: Hashable, Sendable {
  case foreground
  /// A background window; work stops at the deadline.
  case background(deadline: VirtualTime)
  /// Background budget used up: nothing runs until the app is foregrounded.
  case suspended
  /// Killed: memory lost, local store kept; relaunched by the next sync, intent or foreground.
  case killed
}

/// Inputs a device reacts to (besides user intents).
package enum DeviceInput: Hashable, Sendable {
  /// `DEVICE sync`: foreground the app and sync now.
  case syncNow
  /// `DEVICE send`: foreground the app and send its pending changes now (an app's
  /// `sendChanges()`); a fetch follows only as the engine's own schedule makes one.
  case sendNow
  /// `DEVICE fetch`: foreground the app and fetch now (an app's `fetchChanges()`).
  case fetchNow
  case background(budget: SimDuration)
  case kill
  /// Network reachability changed (airplane mode off/on, settle).
  case connectivity(Bool)
  case clockJump(SimDuration)
  case message(Message)
  case timer(TimerKind, generation: UInt32)
  /// The app on this device deleted its zone (a "delete all data" feature): its local data goes
  /// too, and it already knows of the deletion (`epoch`).
  case deletedZone(epoch: Int32)
  /// The device's iCloud account changed (nil: signed out).
  case accountChanged(to: Int32?)
  /// The app was updated to this version.
  case upgraded(to: Int32)
}

/// What the device observed about itself that the oracle and the trace need: never read by
/// policies, never used to decide anything.
package enum DeviceFact: Hashable, Sendable {
  /// `outbox=memory`: pending changes lost when the app was killed.
  case outboxLost([RecordKey])
  /// `unit=mark-first`: a batch cleared at send whose request was then cut off or lost.
  case batchAbandoned([RecordKey], cause: String)
  /// The server rejected the record's type for good.
  case rejected(RecordKey, typeName: String)
  /// A record that had vanished here became visible again; `afterDeletes` are the delete
  /// intents of it this device had applied by then (made, or taken in with a deleted copy).
  case reappeared(RecordKey, afterDeletes: [IntentID])
  /// Fetched changes dropped before they were applied (kill or suspension mid-apply).
  case fetchDropped(count: Int, cause: String)
  /// The engine gave up on these records' pending uploads after a CloudKit error: `told` when
  /// it showed the user (a permanent error, handled correctly), not when the UI shows them
  /// synced (`retry=never`).
  case gaveUp([RecordKey], error: CloudKitError, told: Bool)
  /// Settle ended with these records' uploads still pending here: the sync stalled, waiting on
  /// this error (nil: on nothing the engine was told; it never got through).
  case stalled([RecordKey], waitingOn: CloudKitError?)
  /// The engine learned that its zone was deleted for `reason`: it deleted its local copies of
  /// `wiped` and queued `reuploaded` to be uploaded again.
  case zoneGone(ZoneDeletionReason, wiped: [RecordKey], reuploaded: [RecordKey])
  /// On an account change (`account=wipe`) the engine deleted its local data, and with it the
  /// pending uploads of these records.
  case wipedOnAccountChange([RecordKey])
  /// Settle ended with these records' changes set aside with an account the device was not
  /// signed into (`account=keep`): they were never sent.
  case setAside([RecordKey], account: Int32)
  /// `orphans=drop`: a fetched version of the record was discarded because it refers to
  /// `parent`, which is not on the device.
  case orphanDropped(RecordKey, parent: RecordKey)
  /// `unknown-fields=drop`: an app on `version` saved the whole record without the fields it
  /// does not know, erasing them.
  case erasedUnknownFields(RecordKey, fields: [Int32], version: Int32)
  /// `unknown-fields=drop`: an app on `version` discarded fetched values of fields it does not
  /// know (or a whole record of a type it does not know: `fields` empty).
  case droppedUnknownFields(RecordKey, fields: [Int32], version: Int32)
  /// The server refused these records' writes with `permissionFailure` (the account may not
  /// write them): the engine took the server's records back and told the user (`reverted`), or
  /// dropped the changes and kept showing them as saved.
  case permissionRefused([RecordKey], reverted: Bool)
  /// The account lost access to these shared records: the engine removed its copies
  /// (`removed`), or kept showing them (`kept`, `access-ended=keep`).
  case accessEnded(removed: [RecordKey], kept: [RecordKey])
  /// A user's app no longer has a change of these records pending, though it shows what the
  /// server does not have and the server never acknowledged it: the change will never be sent.
  case appDropped([RecordKey], cause: AppDropCause)
}

/// Why a user's app's pending change went unsent (``DeviceFact/appDropped(_:cause:)``).
package enum AppDropCause: Hashable, Sendable {
  /// The app was killed at that time and relaunched without the change pending: the engine's
  /// state with it was never written to disk. `stateUpdated`: the records whose pending change
  /// a `stateUpdate` had carried before the kill (sorted; the app did not persist it) — the
  /// others were killed within the ~100 ms before one would have.
  case notPersistedBeforeKill(at: VirtualTime, stateUpdated: [RecordKey] = [])
  /// An earlier save of the record was acknowledged while the change was out, and the app's
  /// code took that for this change (it cleared the pending change, or marked the row clean).
  case clearedInFlight
  /// The app's code removed the pending change after this CloudKit error (named as `CKError.Code`).
  case afterError(String)
  /// The app's code removed the pending change on its own.
  case removed
}

/// What a device asks the world to do.
package enum DeviceEffect: Sendable {
  case send(Message)
  case timer(TimerKind, after: SimDuration, generation: UInt32)
  case fact(DeviceFact)
  /// What the user sees of a record changed: it became visible, or stopped being visible.
  case shown(RecordKey, visible: Bool)
  /// The device took in a copy of a record — applied it, or merged it under its own pending
  /// edits — and so received every intent it carries (only with ``DeviceConfig/reportsCopies``).
  case took(RecordState)
  /// A user's app carried out a delete rule of the schema on its own (it deleted a record
  /// whose parent was deleted, or cleared its reference): the world logs it as the rule's
  /// intent, made on the device, as the built-in engine's rules are.
  case ruleIntent(RuleIntent)
  /// A user's app changed its own files: after its step the device holds the file of the asset
  /// named `name` in the app's container (`own`) and in the staging area (`staged`), or not
  /// (a raw observation for the reference oracle: ``Observation/appFile(device:name:own:staged:at:)``).
  case appFile(name: String, own: Bool, staged: Bool)
}

/// A delete rule a user's app carried out (``DeviceEffect/ruleIntent(_:)``).
package struct RuleIntent: Hashable, Sendable {
  /// The intent's id, as the driver gives it (the world's next: ``DeviceEnvironment/nextIntentID``
  /// and on).
  package var id: IntentID
  /// The record the rule changed (a child of the deleted record).
  package var record: RecordKey
  /// Its field that referred to the deleted record.
  package var field: Int32
  /// The deleted record.
  package var parent: RecordKey
  /// The delete of the parent that set the rule off.
  package var trigger: IntentID
  /// A cascade (the record deleted) rather than a nullify (the reference cleared).
  package var cascade: Bool
  package init(id: IntentID, record: RecordKey, field: Int32, parent: RecordKey, trigger: IntentID, cascade: Bool) {
    self.id = id
    self.record = record
    self.field = field
    self.parent = parent
    self.trigger = trigger
    self.cascade = cascade
  }
}

/// What a device's handlers read besides the device's own state: the time, and the policy with
/// its schema. One value per world, its time set before each input.
///
/// What does not change between inputs lives in one shared object, so that handing the
/// environment to a device (the world copies it out of itself to do so, once per input) costs
/// one reference count, not one per policy, schema and rule table.
package struct DeviceEnvironment: Sendable {
  package var now: VirtualTime
  /// For an app driver: the id the next intent the world logs will have (a delete rule the app
  /// carries out is logged with the ids that follow).
  package var nextIntentID: IntentID = 1
  @usableFromInline var _fixed: _Fixed

  /// The parts of an environment that do not change from one input to the next.
  @usableFromInline final class _Fixed: Sendable {
    @usableFromInline let policy: any SyncPolicy
    @usableFromInline let settings: PolicySettings
    @usableFromInline let context: MergeContext
    @usableFromInline let hasReferences: Bool
    @usableFromInline let hasAssets: Bool
    @usableFromInline let hasVersions: Bool
    @usableFromInline let dedupes: Bool
    @usableFromInline let takesRemoteWhenNothingPending: Bool

    init(policy: any SyncPolicy, context: MergeContext) {
      self.policy = policy
      self.settings = policy.settings
      self.context = context
      hasReferences = context.rules.hasReferences
      hasAssets = context.rules.hasAssets
      hasVersions = context.rules.latestVersion > 1
      dedupes = context.rules.hasUniqueness && policy.settings.unique == .dedupe
      takesRemoteWhenNothingPending = policy is StandardPolicy
    }
  }

  package var policy: any SyncPolicy { _read { yield _fixed.policy } }
  /// `policy.settings`, read once.
  package var settings: PolicySettings { _read { yield _fixed.settings } }
  /// The policy's view of the schema and the world's facts about records (set anew when they
  /// change: a record created again, a zone deleted).
  package var context: MergeContext {
    _read { yield _fixed.context }
    set { _fixed = _Fixed(policy: _fixed.policy, context: newValue) }
  }

  /// `context.rules.hasReferences` and whether an older app version may run, read once (the hot
  /// paths test them for every record and intent).
  package var hasReferences: Bool { _fixed.hasReferences }
  /// Whether any type has an `asset` field (the devices keep files only then).
  package var hasAssets: Bool { _fixed.hasAssets }
  package var hasVersions: Bool { _fixed.hasVersions }
  /// Whether a fetched record of a `singleton` or `unique-by` type is checked for duplicates
  /// (`unique=dedupe`).
  package var dedupes: Bool { _fixed.dedupes }
  /// Whether the policy is a ``StandardPolicy``, whose ``SyncPolicy/deviceApply(remote:local:pending:context:)``
  /// returns the server's copy when nothing is pending: the device applies it without asking
  /// (and without copying its own copy out to pass along). Any other policy is always asked.
  package var takesRemoteWhenNothingPending: Bool { _fixed.takesRemoteWhenNothingPending }

  package init(now: VirtualTime = .zero, policy: any SyncPolicy, context: MergeContext) {
    self.now = now
    _fixed = _Fixed(policy: policy, context: context)
  }
}

/// Fixed per-device settings.
package struct DeviceConfig: Hashable, Sendable {
  package var index: Int32
  package var name: String
  /// Position of the name in sorted order (ties in clock/HLC comparisons).
  package var rank: Int32
  package var deviceCount: Int
  /// Debounce after a local change; nil = no autosync.
  package var autosync: SimDuration?
  /// How long a request may go unanswered before it is retried.
  package var requestTimeout: SimDuration = .seconds(5)
  /// First retry delay; doubles up to `maxBackoff`.
  package var backoff: SimDuration = .seconds(1)
  package var maxBackoff: SimDuration = .seconds(60)
  /// Time to commit a fetched page (plus 0.5 ms a record): the window in which a kill separates
  /// saving the token from applying the records.
  package var applyDelay: SimDuration = .milliseconds(20)
  /// Keep a device-wide version vector and stamp it on every write (policy metadata that
  /// `conflict=update-wins` needs to tell a write the deleter had seen, even transitively,
  /// from one it had not): on when the policy's `tracksVersions` says so.
  package var causalMetadata = false
  /// Report every record copy the device takes in (``DeviceEffect/took(_:)``): the oracle's
  /// causal contexts are built from them. Off for runs that will not be judged.
  package var reportsCopies = true
  /// Read a fetched batch's local copies in one pass before applying it
  /// (``WorldConfig/warmsBatches``).
  package var warmsBatches = false

  /// The iCloud account signed in at the start (nil: signed out).
  package var account: Int32? = 0
  /// The app version at the start (the schema version it was built with; `Int32.max`: the
  /// latest).
  package var appVersion: Int32 = .max
  /// Whether the app shares (the scenario has shares): the engine then fetches the account's
  /// shared database after its private one.
  package var sharing = false

  package init(index: Int32, name: String, rank: Int32, deviceCount: Int, autosync: SimDuration?) {
    self.index = index
    self.name = name
    self.rank = rank
    self.deviceCount = deviceCount
    self.autosync = autosync
  }
}
