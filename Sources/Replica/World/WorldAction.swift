@_spi(Kernel) import Simulator

/// Something scheduled to happen to the world at a time: a user intent, a device event, or a
/// fault. Names are resolved to indices (devices in declaration order, records by key).
package enum WorldAction: Hashable, Sendable {
  case intent(device: Int32, UserIntent)
  case sync(device: Int32)
  /// `DEVICE send`: the device sends its pending changes now.
  case send(device: Int32)
  /// `DEVICE fetch`: the device fetches now.
  case fetch(device: Int32)
  case kill(device: Int32)
  case background(device: Int32, budget: SimDuration)
  case clockJump(device: Int32, by: SimDuration)
  case syncAll
  case setOnline([Int32], Bool)
  case server(up: Bool)
  /// `free SIZE`: the user frees iCloud storage (or buys more).
  case freeStorage(bytes: Int64)
  /// `reject ID... with ERROR [retry-after D] for D`: the server refuses saves of these records.
  case reject(RejectRule)
  /// `DEVICE delete-zone`, `DEVICE purge-zone` (a user deleting the app's data: `device` set),
  /// `encrypted-data-reset` (the server loses the zone: `device` nil).
  case deleteZone(device: Int32?, ZoneDeletionReason)
  /// `DEVICE sign-out` (nil), `DEVICE sign-in ACCOUNT`, `DEVICE switch-account ACCOUNT`.
  case account(device: Int32, Int32?)
  /// `DEVICE upgrade N`: the app on the device is updated to version N.
  case upgrade(device: Int32, version: Int32)
  /// `DEVICE share S`, `invite`, `accept`, `leave`, `unshare`, `permission`, `remove`: the user
  /// changes a share in the sharing UI on the device.
  case share(device: Int32, ShareAction)
  /// `DEVICE delete-file ID.FIELD` (`changed` false), `DEVICE change-file ID.FIELD` (true): the
  /// app deletes, or changes in place, the file of the asset the field refers to on the device.
  case file(device: Int32, key: RecordKey, field: Int32, changed: Bool)
  /// `DEVICE purge-staging`: the system deletes every file in the device's staging area.
  case purgeStaging(device: Int32)
}

/// How the world is set up.
package struct WorldConfig: Sendable {
  /// Per device, its link's bandwidth in bits per second, both ways (0: unlimited); empty: every
  /// link unlimited. A message's delivery takes its latency plus the asset bytes it carries at
  /// this rate.
  package var bandwidth: [Int64] = []
  package var deviceNames: [String]
  package var clocks: [DeviceClock]
  package var schema: Schema {
    didSet { context = nil }
  }
  /// A merge context already made for ``schema`` (a compiled scenario run many times makes it
  /// once); nil: the world makes it. Setting ``schema`` clears it.
  package var context: MergeContext?
  package var policy: any SyncPolicy
  package var seed: UInt64
  package var network: NetworkConditions
  /// Debounce after a local change; nil = off.
  package var autosync: SimDuration?
  /// Push notifications: `nil` off, else delivered with this probability.
  package var push: Probability?
  /// Limits, quota, throttling and atomicity of the server (the same for every account).
  package var server = ServerConditions()
  /// The iCloud accounts, each with its own private database (one, `icloud`, unless the
  /// scenario declares them), and the account each device starts signed into (nil: signed out).
  package var accounts = ["icloud"]
  /// The shares the scenario names (empty: nothing is shared, and devices fetch no shared
  /// database).
  package var shares: [String] = []
  /// Per share, the root record of a hierarchy share (`share S of ID`); nil (or no entry): a
  /// zone-wide share.
  package var shareRoots: [RecordKey?] = []
  /// Per share, the zone a zone-wide share shares (0: the app's zone; named zones from 1).
  package var shareZones: [Int32] = []
  /// Per record, the zone it is made in (0, or no entry: the app's zone); only shares read it.
  package var recordZones: [Int32] = []
  /// The names of the zones from 1 (zone 0 is the app's own), for people.
  package var zoneNames: [String] = []
  package var deviceAccounts: [Int32?]? = nil
  /// The app version each device starts on (nil: every device on the schema's latest).
  package var appVersions: [Int32]? = nil
  /// Keep ``SyncWorld/events`` (every message with its payload, every server decision): what
  /// pictures, explanations and `--trace` need. Off for fuzzing; it never changes the hash.
  package var keepsEvents: Bool
  /// Record causal contexts for the oracle. Off only for runs that will not be judged.
  package var trackCausality = true
  /// Keep ``WorldFacts/observations``: every intent, every record copy a device or the server
  /// took in, and every change in what a device shows, in order — the raw material of an
  /// independent reference checker. Off by default (it keeps a copy per receipt).
  package var recordObservations = false
  /// Read each batch's cold memory in one pass before working through it (``RecordTable/warm(_:)``):
  /// nil decides by the number of devices (``batchWarmingDevices``). It never changes what
  /// happens, only how fast — which the tests check by turning it off.
  package var warmsBatches: Bool? = nil

  package init(
    deviceNames: [String], clocks: [DeviceClock]? = nil, schema: Schema, policy: any SyncPolicy, seed: UInt64,
    network: NetworkConditions = NetworkConditions(), autosync: SimDuration? = .seconds(1), push: Probability? = .always,
    keepsEvents: Bool = false
  ) {
    self.deviceNames = deviceNames
    self.clocks = clocks ?? deviceNames.map { _ in .perfect }
    self.schema = schema
    self.policy = policy
    self.seed = seed
    self.network = network
    self.autosync = autosync
    self.push = push
    self.keepsEvents = keepsEvents
  }
}

/// What the world observed that the oracle needs besides intents and final states: causes of
/// stranded records, transient resurrections, and whether the run settled. Recorded by the
/// simulator, never by a policy.
package struct WorldFacts: Sendable {
  package struct Event: Hashable, Sendable {
    package var time: VirtualTime
    package var device: Int32
    package var fact: DeviceFact
    /// How many intents had been made when it happened: it came after intent `i` iff
    /// `intentsBefore >= i` (exact even when both happen at one instant).
    package var intentsBefore: Int32
  }
  package var events: [Event] = []
  /// Changes made to a record whose upload its device had given up on for good (the user told):
  /// they wait with it, never sent (in id order; not hashed).
  package var heldByGiveUp: [IntentID] = []
  /// Per record created again after a delete: the incarnation (creating intent) of the copy the
  /// server held last, live or deleted (lookups only).
  package var serverIncarnations: [RecordKey: IntentID] = [:]
  /// What the server did with deletes and revivals, in order: which side of a delete/update
  /// conflict really won.
  package var serverEvents: [ServerEvent] = []
  /// Per intent (indexed by id; index 0 unused): whether it reached the server — a write the
  /// server received carried it in a field the write changed (or as its delete), or a version
  /// the server stored carried it. An edit that never did was never sent.
  package var reachedServer: [Bool] = [false]
  /// With sharing: the intents the server took — carried by a write it saved or applied as a
  /// delete (a write refused as a conflict, or because the record is deleted, was received but
  /// not taken).
  package var takenByServer: Set<IntentID> = []
  /// Clock jumps, in order (for reports that explain clock-based decisions).
  package var clockJumps: [(time: VirtualTime, device: Int32, by: SimDuration)] = []
  /// With ``WorldConfig/recordObservations``: the raw record of the run, in order.
  package var observations: [Observation] = []
  /// Delete intents the user made in Settings (`purge-zone`), in id order: the app on that
  /// device did not apply them when they were made.
  package var settingsDeletes: [IntentID] = []
  /// Zone deletions, in order: when, by which device's user (nil: an encrypted-data reset), why.
  package var zoneDeletions: [(time: VirtualTime, device: Int32?, reason: ZoneDeletionReason)] = []
  /// The deletes of a record that others may refer to (its type has referrers), with what the
  /// deleting device then knew of each live referring record it showed (with
  /// ``WorldConfig/trackCausality``): whether a later cascade deleted a record the user knew no
  /// longer referred to the deleted one.
  package var deleteKnowledge: [DeleteKnowledge] = []
  /// Every delete a cascade made, in order: the intent, the record whose deletion set it off
  /// (the child referred to it) and the child's field that did.
  package var cascades: [Cascade] = []
  /// Whether `settle` reached quiescence within its bound.
  package var settled = true
  /// Why it did not, if it did not.
  package var unsettledReason: String?
  /// When settle began (nil if never).
  package var settleStart: VirtualTime?
  /// How long settle took to reach quiescence (nil: it did not, or never ran): the liveness
  /// phase's time to converge.
  package var convergedAfter: SimDuration?
}

/// What a device knew, when it deleted a record, of the records of referring types it showed:
/// for each, exactly which of its intents it had received (``CausalLedger``).
package struct DeleteKnowledge: Sendable {
  /// The delete intent.
  package var delete: IntentID
  /// The live records of referring types on the deleting device, ascending.
  package var records: [RecordKey]
  /// What the device had received of each (parallel to ``records``).
  package var contexts: [CausalContext]
}

/// A delete a cascade made: intent ``intent`` deleted its record because its ``field`` referred
/// to ``parent``, which the device had deleted or learned was deleted.
package struct Cascade: Hashable, Sendable {
  package var intent: IntentID
  package var parent: RecordKey
  package var field: Int32
}

/// What the server did with a delete, or with a save of a deleted record.
package enum ServerEvent: Hashable, Sendable {
  /// The delete took effect: the record is a tombstone carrying `delete`.
  case deleted(RecordKey, by: IntentID, at: VirtualTime)
  /// The delete arrived and the record was kept (an update the deleting device had not seen
  /// beat it).
  case keptOverDelete(RecordKey, delete: IntentID, at: VirtualTime)
  /// A save brought a deleted record back.
  case revived(RecordKey, at: VirtualTime)
  /// Device `device`, signed into `account`, saved a record made under another account (with
  /// no access to it) into `account`'s database.
  case savedIntoAnotherAccount(RecordKey, account: Int32, device: Int32, at: VirtualTime)
}

/// One raw observation of a run (``WorldConfig/recordObservations``): what happened, never a
/// judgement. An independent checker rebuilds causality and outcomes from these alone.
package enum Observation: Sendable {
  /// An intent was made (look it up in the log; its `context` is the oracle's, not raw data).
  case intent(IntentID)
  /// A device took in a copy of a record: applied it, or merged it under its pending edits.
  case received(device: Int32, copy: RecordState, at: VirtualTime)
  /// The system purged a device's staging area (`purge-staging`).
  case stagingPurged(device: Int32, at: VirtualTime)
  /// The app deleted the file of the asset named `name` on a device (`delete-file`).
  case fileDeleted(device: Int32, name: String, at: VirtualTime)
  /// A user's app changed its own files (`SimDevice.files`): the device now holds the file of
  /// the asset named `name` in the app's container (`own`) and in the staging area (`staged`),
  /// or not.
  case appFile(device: Int32, name: String, own: Bool, staged: Bool, at: VirtualTime)
  /// The server received a pushed copy: a delete, or a save of the fields in `changed` (the
  /// fields the device says it changed; bit `i` is field `i`).
  case serverReceived(copy: RecordState, isDelete: Bool, changed: FieldMask, at: VirtualTime)
  /// The server answered a save with this version of the record (stored, or kept as it was).
  case serverStored(copy: RecordState, at: VirtualTime)
  /// With sharing: of the writes the server received (``serverReceived(copy:isDelete:changed:at:)``),
  /// one it took — saved, or applied as a delete — rather than refused as a conflict.
  case serverTook(copy: RecordState, isDelete: Bool, changed: FieldMask, at: VirtualTime)
  /// A device dropped pending uploads of these records without sending them (an in-memory
  /// outbox killed, a mark-first batch cut off, a type the server rejects).
  case droppedUnsent(device: Int32, keys: [RecordKey], at: VirtualTime)
  /// The server refused a device's writes of these records for lack of permission, and the
  /// device took the server's records back and told the user; or the device's account lost
  /// access to them and the device removed them: the pending changes it had made so far on them
  /// are withdrawn.
  case withdrawn(device: Int32, keys: [RecordKey], at: VirtualTime)
  /// What a device shows of a record changed: it became visible, or stopped being visible.
  case visibility(device: Int32, key: RecordKey, visible: Bool, at: VirtualTime)
  /// A device's iCloud account changed (signed out, signed in, switched): what it stops showing
  /// at this instant goes with the account, not with a delete.
  case accountChanged(device: Int32, at: VirtualTime)
}

/// Trace record kinds of the replica world.
package enum WorldTrace {
  package static let intent = TraceKind(code: 10, name: "intent", fields: ("intent", "record", "ignored"))
  package static let send = TraceKind(code: 11, name: "send", fields: ("message", "to", "records"))
  package static let deliver = TraceKind(code: 12, name: "deliver", fields: ("message", "from", "records"))
  package static let drop = TraceKind(code: 13, name: "drop", fields: ("message", "to", "reason"))
  package static let fact = TraceKind(code: 14, name: "fact", fields: ("kind", "record", "count"))
  package static let lifecycle = TraceKind(code: 15, name: "lifecycle", fields: ("event", "value", "-"))
  package static let settle = TraceKind(code: 17, name: "settle", fields: ("round", "pending", "-"))
  /// After settle: one per node, the digest of its whole final state (every copy with values,
  /// provenance and stamps; the server's records and head) and how many records it holds.
  package static let finalState = TraceKind(code: 20, name: "final-state", fields: ("digest", "records", "-"))
}
