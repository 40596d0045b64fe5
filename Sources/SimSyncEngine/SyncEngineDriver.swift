import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// Runs a user's app and its `SyncEngine` on one simulated device (``AppDriver``): it makes the
/// app's changes, sends and fetches as `CKSyncEngine` does — on its own schedule, or when the
/// app or the scenario asks — turns batches into requests and replies into events, and after
/// every step tells the world what the app shows, with each value's provenance found from the
/// value itself (workloads for user apps write values unique per intent).
///
/// The parts: intents and inputs here; sends in `+Send`, fetches in `+Fetch`, zones and
/// accounts in `+Accounts`, what the app shows in `+View`.
///
/// (Its stored properties, as those of the engine's state, the device link, the disk, the
/// provenance registry and the runner, are not checked for exclusive access at run time: they
/// are the simulator's, touched only on its thread, and the checks were a twentieth of an app's
/// seed. The app's own classes keep theirs: they find real violations in a user's code.)
package final class SyncEngineDriver<App: SimApp>: AppDriver {
  let index: Int
  let name: String
  let schema: Schema
  /// Record names by key (the scenario's ids, or the names the app's naming gives them), and
  /// keys by name.
  let names: [String]
  @exclusivity(unchecked) var keys: [String: RecordKey] = [:]
  /// The scenario's ids, by key (reports name records by them).
  let ids: [String]
  /// The app's stated zones and naming.
  let appSchema: AppSchema
  let disk = SimDisk()
  /// The device's files (the app's container, the staging area): kept across kills, as the disk.
  let files: SimFiles
  /// Per record type, its `asset` fields (empty when the schema has none).
  let assetFields: [[Int]]
  /// What the world was last told of the device's files (``syncFiles(_:env:effects:)``), and at
  /// which of their versions.
  @exclusivity(unchecked) var toldFiles: [String: SimFiles.Holding] = [:]
  @exclusivity(unchecked) var toldFilesVersion: UInt64 = 0
  @exclusivity(unchecked) var app: App?
  /// What ties the app's engine to this device.
  let link = DeviceLink()
  /// Runs the app's own `async` calls (its launch, intents, what it shows) to their end.
  let runner = InlineRunner()

  /// A send or fetch, from its first event to its last (`willSendChanges` … `didSendChanges`).
  enum Operation {
    case idle
    case sending(SyncEngine.SendChangesContext)
    /// A fetch, with the zones whose records it announced (`willFetchRecordZoneChanges`).
    case fetching(SyncEngine.FetchChangesContext, zones: [SyncRecordZoneID])
  }
  @exclusivity(unchecked) var operation = Operation.idle
  /// The request the operation waits on.
  enum InFlight {
    case none
    /// A push: each change sent, with how many times it had been added then, and the records.
    case push(UInt64, [(change: SyncEngine.PendingRecordZoneChange, additions: Int)], records: [SyncRecord])
    case fetch(UInt64)
    /// Zone saves and deletes.
    case zones(UInt64, [SyncEngine.PendingDatabaseChange])
  }
  @exclusivity(unchecked) var inFlight = InFlight.none
  @exclusivity(unchecked) var nextRequest: UInt64 = 1
  /// What is to be done next, in order: the scenario's and the app's requests, and the engine's
  /// own schedule.
  @exclusivity(unchecked) var queue: [(request: DeviceLink.Request, reason: SyncEngine.SyncReason, scope: SyncDatabase.Scope)] = []
  /// The database of the engine whose send or fetch is under way (the private one when idle).
  @exclusivity(unchecked) var operationScope = SyncDatabase.Scope.private
  /// Per database (private first, shared second): the pending record changes as they were when
  /// the delegate last gave no batch for them (nil: it gave one). A fetch does not set a send
  /// going for the same changes again — the engine would ask, be given nothing, fetch, and ask
  /// again for as long as the app runs; `CKSyncEngine` sends again when changes are added.
  @exclusivity(unchecked) var declined: [[SyncEngine.PendingRecordZoneChange]?] = [nil, nil]
  /// Whether the run shares (the scenario has `share` lines): the app's shared-database engine
  /// runs beside its private one.
  @exclusivity(unchecked) var sharingRun = false
  /// In a scenario that shares, the zone `create … in ZONE` puts each record in, by key (nil:
  /// the app's zone for its type), and a record a participant made under one of a share's, its
  /// parent's; and the zones those lines name, in order (the world's zone `n` is
  /// `scenarioZoneNames[n - 1]`). Each account's database has them from the start, as the zones
  /// the app declares.
  @exclusivity(unchecked) var scenarioZones: [String?] = []
  let scenarioZoneNames: [String]
  /// Per record type, its field marked `parent` (`CKRecord.parent`), if any.
  let parentFields: [Int?]
  /// The account the device is signed into (as its view last said).
  @exclusivity(unchecked) var currentAccount: Int32?
  /// The account the device was signed into when the world last called in (every run; the
  /// database a copy of a record is of, for its change tag).
  @exclusivity(unchecked) var signedIn: Int32?
  /// With sharing: what the server's answers to shared fetches said, by request, until they
  /// arrive: each record's owner, and the shares as they were.
  @exclusivity(unchecked) var sharedAnswers: [UInt64: (owners: [(key: RecordKey, owner: Int32)], shares: [Share])] = [:]
  /// The account that owns each record this device learned of from a shared database, or made
  /// in a share.
  @exclusivity(unchecked) var ownerOf: [RecordKey: Int32] = [:]
  /// Per account and share (``shareKey(_:)``): the share the app's shared engine last handed
  /// over, until it or its zone left the shared database.
  @exclusivity(unchecked) var deliveredShares: [Int64: DeliveredShare] = [:]
  /// Records that came from the shared database or were made in a share, not yet told to the
  /// world's view.
  @exclusivity(unchecked) var newSharedKeys: [RecordKey] = []
  /// Records whose share left the device's shared database in this step (the app dropping
  /// them, or their pending changes, is no loss).
  @exclusivity(unchecked) var stepAccessEnded: Set<RecordKey> = []
  /// Records whose change the server refused with `permissionFailure` in this step: the values
  /// the refused save carried (nil for a refused delete).
  @exclusivity(unchecked) var stepRefused: [RecordKey: [String: SyncValue]?] = [:]
  /// The last ``pendingKeys(_:)`` read of the shared engine's state.
  @exclusivity(unchecked) var sharedPendingCache: (state: SyncEngine.State, version: UInt64, keys: [RecordKey])?
  /// The shared engine's record changes pending at its last `stateUpdate`.
  @exclusivity(unchecked) var sharedStateUpdated: [SyncEngine.PendingRecordZoneChange] = []
  /// Timer generations: a timer set before a kill, or superseded, is ignored when it fires.
  @exclusivity(unchecked) var sendGeneration: UInt32 = 0
  @exclusivity(unchecked) var retryGeneration: UInt32 = 0
  @exclusivity(unchecked) var timeoutGeneration: UInt32 = 0
  @exclusivity(unchecked) var stateGeneration: UInt32 = 0
  /// Whether a `stateUpdate` is due (its timer is set).
  @exclusivity(unchecked) var stateUpdateDue = false
  /// Records a push sends at most, halved after `limitExceeded` (as `CKSyncEngine` splits a
  /// batch CloudKit refuses as too large).
  @exclusivity(unchecked) var batchLimit = 400
  /// Until when the engine waits before sending or fetching again (a retry-after).
  @exclusivity(unchecked) var holdUntil: VirtualTime = .zero
  /// Pushes in a row that came back with a failure: the engine backs off (1 s, doubling, at
  /// most a minute) before sending again, so that an app that keeps resending what the server
  /// refuses does not spin.
  @exclusivity(unchecked) var failedPushes = 0
  /// After a push came back with failures, fetch before sending again — only under `engine
  /// fetch-first` (``fetchesFirstAfterFailure``).
  @exclusivity(unchecked) var fetchFirst = false
  /// Which intent wrote what, shared by every device's driver in the run.
  let provenance: ProvenanceRegistry
  var written: [RecordKey: [(field: Int32, value: Value, intent: IntentID)]] {
    provenance.written
  }
  var creators: [RecordKey: IntentID] {
    provenance.creators
  }
  var deleters: [RecordKey: IntentID] {
    get { provenance.deleters }
    _modify { yield &provenance.deleters }
  }
  /// The latest delete this device made of each record: what a delete it sends carries.
  @exclusivity(unchecked) var ownDeletes: [RecordKey: IntentID] = [:]
  /// Why the delegate could not be run, if it could not: the device stops, and the report
  /// fails with it.
  @exclusivity(unchecked) package private(set) var failure: String?
  /// Faults this device ignored because they are not simulated for an app yet, once per kind.
  @exclusivity(unchecked) package private(set) var notSimulated: [String] = []
  @exclusivity(unchecked) var notSimulatedKinds: Set<String> = []
  /// What the app made of the intents it was given.
  @exclusivity(unchecked) package private(set) var tally = AppIntentTally()
  /// The time of the input or intent being handled (for the failure's message).
  @exclusivity(unchecked) var now: VirtualTime = .zero

  /// The scenario's account names (`icloud`, or those of its `account` lines), by number: the
  /// users an `accountChange` event names.
  let accountNames: [String]
  /// Per account, the zone epoch this device last knew there (restored when it signs in again).
  @exclusivity(unchecked) var zoneEpochs: [Int32: Int32] = [:]
  /// Per account, the records whose changes were pending when the device signed out of it and
  /// that the app no longer had pending after (set aside, or wiped).
  @exclusivity(unchecked) var setAside: [Int32: [RecordKey]] = [:]
  /// The zones the app used on this device (saved, or sent records to): a zone deletion names
  /// them all in `fetchedDatabaseChanges`.
  @exclusivity(unchecked) var knownZones: [SyncRecordZoneID] = []
  /// The zones the user's "delete all data" on this device deleted (the world deletes them at
  /// the intent): the app's own delete of them, when its engine sends it, deletes nothing more.
  @exclusivity(unchecked) var deletedByTheUser: [SyncRecordZoneID] = []

  /// What the step being made did, for telling which unsent changes the app dropped: records
  /// whose change the server acknowledged, and the CloudKit error each failed change met.
  @exclusivity(unchecked) var stepAcknowledged: Set<RecordKey> = []
  @exclusivity(unchecked) var stepErrors: [RecordKey: String] = [:]
  /// The records with a pending change after the last step, and the last copy of each record
  /// the server gave this device.
  @exclusivity(unchecked) var lastPending: Set<RecordKey> = []
  @exclusivity(unchecked) var serverCopies: [RecordKey: RecordState] = [:]
  /// The last ``pendingKeys(_:)`` read: of which engine state, at which of its versions (the
  /// state is held, so that no other takes its identity).
  @exclusivity(unchecked) var pendingCache: (state: SyncEngine.State, version: UInt64, keys: [RecordKey])?
  /// When the app was killed with changes pending in memory, and which: checked when it launches
  /// again.
  @exclusivity(unchecked) var killed: (at: VirtualTime, pending: Set<RecordKey>, stateUpdated: Set<RecordKey>)?
  /// The record changes pending at the last `stateUpdate` delivered since the app launched: what
  /// an app that persisted it would have relaunched with. (Kept as the engine's array, which
  /// costs a reference; made into keys only at a kill.)
  @exclusivity(unchecked) var stateUpdated: [SyncEngine.PendingRecordZoneChange] = []
  /// Whether the account changed in this step (what was pending went with the old database).
  @exclusivity(unchecked) var accountChangedThisStep = false
  /// Whether the app states its schema, and so carries out its delete rules itself.
  package var runsItsOwnDeleteRules: Bool { provenance.appStatesSchema }
  /// What the app showed after the last step (for the delete rules it carries out), by key and
  /// in key order.
  @exclusivity(unchecked) var lastShown: [RecordKey: RecordState] = [:]
  @exclusivity(unchecked) var lastShownList: [RecordState] = []
  /// What the app showed when last read, kept up to date from what it says changed
  /// (``SimApp/shownRecordChanges()``) rather than read whole after every step.
  @exclusivity(unchecked) var shownCache = ShownCache()
  /// The deletes this device knows of, by record: its own and those it fetched.
  @exclusivity(unchecked) var knownDeletes: [RecordKey: IntentID] = [:]
  /// Records deleted in this step by an intent or a fetched deletion.
  @exclusivity(unchecked) var stepDeleted: Set<RecordKey> = []
  /// Live copies the device took in during this step.
  @exclusivity(unchecked) var stepTaken: [RecordState] = []
  /// The id the next delete rule the app carries out is logged with.
  @exclusivity(unchecked) var nextRuleID: IntentID = 1
  /// Calls into the delegate so far.
  var deliveries: Int { link.delegateCalls }

  /// Whether a batch built from the pending changes is atomic by zone (the scenario's `zone atomic`).
  let atomicBatches: Bool
  /// `engine fetch-first`: after a push with failures, fetch before sending again (Apple
  /// documents no such order; off by default).
  let fetchesFirstAfterFailure: Bool
  /// Whether every step is walked for the delete rules the app carried out, even one that changed
  /// nothing the app shows (tests compare the runs: ``DriverTestSettings``).
  let walksEveryStepForRules = DriverTestSettings.walksEveryStepForRules

  package init(
    index: Int, name: String, schema: Schema, recordNames: [String], accountNames: [String] = ["icloud"], atomicBatches: Bool = false,
    fetchesFirst: Bool = false,
    provenance: ProvenanceRegistry, appNames: [String]? = nil, recordZones: [String?] = [], zoneNames: [String] = []
  ) {
    scenarioZones = recordZones
    scenarioZoneNames = zoneNames
    parentFields = schema.types.map { type in type.fields.firstIndex { $0.isParent && $0.referencedType != nil } }
    self.atomicBatches = atomicBatches
    fetchesFirstAfterFailure = fetchesFirst
    self.accountNames = accountNames
    self.provenance = provenance
    self.index = index
    self.name = name
    self.schema = schema
    files = SimFiles(device: name)
    let assets = schema.types.map { type in type.fields.indices.filter { type.fields[$0].kind == .asset } }
    assetFields = assets.contains { !$0.isEmpty } ? assets : []
    appSchema = App.schema
    ids = recordNames
    disk.meter = AppCostMeter.current
    // (The names the app is handed are the same on every device of a run: made once a run when
    // the caller gives them.)
    let naming = appSchema.recordNames
    names =
      appNames
      ?? recordNames.enumerated().map { k, id in
        Self.name(for: id, type: k < provenance.types.count ? schema.types[Int(provenance.types[k])].name : "", naming: naming)
      }
    for (k, n) in names.enumerated() { keys[n] = RecordKey(k) }
  }

  /// The name the app is handed for the scenario's id `id` of a record of type `type`: the id
  /// itself, a UUID drawn from it (upper-case, as `UUID().uuidString`), or the app's pattern
  /// filled in — the same in every run.
  static func name(for id: String, type: String, naming: AppSchema.RecordNames) -> String {
    switch naming {
    case .uuids: return uuid(for: id)
    case .pattern(let p):
      var name = p.replacingOccurrences(of: "{type}", with: type)
      if name.contains("{uuid}") { name = name.replacingOccurrences(of: "{uuid}", with: uuid(for: id)) }
      return name.replacingOccurrences(of: "{id}", with: id)
    case .fresh, .reused: return id
    }
  }

  /// A UUID drawn from the scenario's id `id`.
  static func uuid(for id: String) -> String {
    var a = StableHasher()
    a.combine("uuid-a:" + id)
    var b = StableHasher()
    b.combine("uuid-b:" + id)
    var hex = String(a.value, radix: 16, uppercase: true)
    hex = String(repeating: "0", count: 16 - hex.count) + hex
    var low = String(b.value, radix: 16, uppercase: true)
    low = String(repeating: "0", count: 16 - low.count) + low
    let digits = Array(hex + low)
    // Version 4, variant 10, as a random UUID has.
    var chars = digits
    chars[12] = "4"
    chars[16] = ["8", "9", "A", "B"][Int(String(chars[16]), radix: 16)! & 3]
    let s = String(chars)
    func part(_ from: Int, _ to: Int) -> Substring { s[s.index(s.startIndex, offsetBy: from)..<s.index(s.startIndex, offsetBy: to)] }
    return "\(part(0, 8))-\(part(8, 12))-\(part(12, 16))-\(part(16, 20))-\(part(20, 32))"
  }

  /// The zones the app declares (``AppSchema/zoneName`` and ``AppSchema/zones``), and those a
  /// scenario that shares puts records in (`create … in ZONE`): its database has them when the
  /// run starts (an account that used the app before, its records already in them).
  package var initialZones: [Int32] {
    var names = [appSchema.zoneName]
    for name in appSchema.zones.values.sorted() where !names.contains(name) { names.append(name) }
    for name in scenarioZoneNames where !names.contains(name) { names.append(name) }
    return names.map { provenance.zoneNumber(SyncRecordZoneID(zoneName: $0)) }
  }

  /// The zones of the app's database as this device knows them: those it used (or the app's
  /// zone, before it used any) and, in a scenario with zones of its own, the app's zone and
  /// those, which the database has from the start. A zone deletion names them all.
  var databaseZones: [SyncRecordZoneID] {
    let appZone = appSchema.zone(forType: "")
    var zones = knownZones.isEmpty ? [appZone] : knownZones
    guard !scenarioZoneNames.isEmpty else { return zones }
    for zone in [appZone] + scenarioZoneNames.map({ SyncRecordZoneID(zoneName: $0) }) where !zones.contains(zone) { zones.append(zone) }
    return zones
  }

  /// The scenario's zone of record `key` (nil: none named).
  func scenarioZone(of key: RecordKey) -> String? { Int(key) < scenarioZones.count ? scenarioZones[Int(key)] : nil }

  /// The zone records of type `type` are made in.
  func defaultZone(ofType type: Int32) -> SyncRecordZoneID {
    appSchema.zone(forType: Int(type) < schema.types.count ? schema.types[Int(type)].name : "")
  }

  /// A record's identity: its name, in the zone it was last saved in (or its type's).
  func recordID(_ key: RecordKey) -> SyncRecordID {
    if !ownerOf.isEmpty, let id = sharedRecordID(key) { return id }
    if let n = provenance.zoneOf[key], let zone = provenance.zone(n) { return SyncRecordID(recordName: names[Int(key)], zoneID: zone) }
    if let zone = scenarioZone(of: key) { return SyncRecordID(recordName: names[Int(key)], zoneID: SyncRecordZoneID(zoneName: zone)) }
    return SyncRecordID(recordName: names[Int(key)], zoneID: defaultZone(ofType: knownType(of: key)))
  }

  /// Record `key`'s type, as the run made it (0 for a key no create made).
  func knownType(of key: RecordKey) -> Int32 {
    Int(key) < provenance.types.count ? provenance.types[Int(key)] : 0
  }

  /// The device clock the app reads (`SimDevice.now`), set before every call into the app.
  let clock = SimDeviceClock()
  /// Launches so far: each gets its own generator.
  @exclusivity(unchecked) var launches = 0
  /// Calls into the app's code so far (its launches, intents, reads, delegate calls): what the
  /// app shows changes only in its own code, so with none since the last read it is unchanged.
  @exclusivity(unchecked) var appEntries = 0
  /// What the simulator is asking of the app in this step, for the behaviour log.
  @exclusivity(unchecked) var stepInput = ""
  /// When the step is made (true time).
  @exclusivity(unchecked) var stepTime = VirtualTime.zero

  /// The app, launched (again, after a kill) from its disk. A launch whose engine has changes
  /// pending schedules a send, as `CKSyncEngine` does when it is made with pending changes.
  func launched() -> App {
    if let app { return app }
    launches += 1
    appEntries &+= 1
    let random = SimDeviceRandom(seed: provenance.seed, device: name, launch: launches)
    let device = SimDevice(
      name: name, index: index, disk: disk, clock: clock, random: random, zoneID: appSchema.zone(forType: ""), link: link, files: files)
    // Made on the simulator's thread: a task the app starts as it launches runs here too.
    let made: App
    do { made = try runner.run { Unchecked(App(device: device)) }.value } catch {
      fail(InlineRunner.Suspended().description)
      made = App(device: device)
    }
    app = made
    link.stateChanged = false
    link.sharedStateChanged = false
    if let killed {
      // What the app had pending when it was killed and does not have now was never sent
      // (judged at the next update, against what the app shows).
      let keys = killed.pending.subtracting(pendingKeys(made))
      forgotten = (killed.at, keys, keys.intersection(killed.stateUpdated))
      self.killed = nil
    }
    if !made.syncEngine.state.pendingRecordZoneChanges.isEmpty || !made.syncEngine.state.pendingDatabaseChanges.isEmpty
      || made.sharedSyncEngine.map({ !$0.state.pendingRecordZoneChanges.isEmpty }) == true
    {
      relaunchedWithPending = true
    }
    return made
  }
  /// Records whose pending change the app forgot across the kill at that time (judged at the
  /// next update).
  @exclusivity(unchecked) var forgotten: (at: VirtualTime, keys: Set<RecordKey>, stateUpdated: Set<RecordKey>)?
  /// The app launched with changes pending: the engine schedules a send.
  @exclusivity(unchecked) var relaunchedWithPending = false

  /// Runs an async call into the app to its end on the simulator's thread.
  @inline(__always) func inApp<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T? {
    appEntries &+= 1
    do { return try runner.run(body) } catch {
      fail(InlineRunner.Suspended().description)
      return nil
    }
  }

  // MARK: AppDriver: intents

  package func perform(_ intent: UserIntent, id: IntentID, view: inout DeviceState, env: DeviceEnvironment, effects: inout [DeviceEffect]) -> Intent {
    now = env.now
    nextRuleID = id + 1
    clock.deviceTime = view.clock.read(at: env.now)
    if provenance.behaviour != nil { (stepInput, stepTime) = ("intent i\(id)", env.now) }
    signedIn = view.account
    let app = launched()
    if view.config.sharing { checkSharing(view) }
    let key = intent.key
    // The record's type: its create's (the device may not show it).
    let type = Int(key) < provenance.types.count ? provenance.types[Int(key)] : (view.store.type(of: key) ?? 0)
    let shown = view.visibleRecord(key) != nil
    var kind: IntentKind
    var appIntent: AppIntent
    switch intent {
    case .create(let createType, _, let values):
      kind = .create(type: createType, values: values)
      let id = (sharingRun ? recordIDMadeInShare(intent, key: key) : nil) ?? recordID(key)
      appIntent = .create(recordType: schema.types[Int(createType)].name, recordID: id, values: fieldValues(createType, values))
    case .set(_, let values):
      kind = .set(values)
      appIntent = .set(recordID: recordID(key), values: fieldValues(type, values))
    case .delete:
      kind = .delete
      appIntent = .delete(recordID: recordID(key))
    case .append(_, let field, let text):
      kind = .append(field: field, text: text)
      guard Int(field) < schema.types[Int(type)].fields.count else {
        return refused(id, key, kind, view, env, expected: !shown, shows: shown)
      }
      appIntent = .append(recordID: recordID(key), field: schema.types[Int(type)].fields[Int(field)].name, text: text)
    case .replace(_, let field, let old, let new):
      kind = .replace(field: field, old: old, new: new, removed: [])
      tally.notSimulated += 1
      notSimulated("a text replacement")
      return made(id, key, kind, view, env, ignored: "text replacements are not yet simulated for a user's app (appends are)")
    }
    let (target, change) = (Unchecked(app), appIntent)
    // A reference the user makes names a record the device shows (one it does not show is one
    // the user could not pick): an intent naming another is not the app's to make.
    if let missing = missingReference(intent, view) {
      tally.refusedAsExpected += 1
      return made(id, key, kind, view, env, ignored: "it refers to \(ids[Int(missing)]), which is not on this device")
    }
    if sharingRun, let why = crossZoneReference(intent, key: key) {
      tally.refusedAsExpected += 1
      return made(id, key, kind, view, env, ignored: why)
    }
    let done = inApp { await target.value.perform(change) } ?? false
    guard done else {
      update(&view, env: env, effects: &effects)
      if sharingRun, let why = readOnlyHere(intent, key: key, view) {
        // The app's sharing code stops the user editing a read-only share: no change was made.
        tally.refusedAsExpected += 1
        return made(id, key, kind, view, env, ignored: why)
      }
      return refused(id, key, kind, view, env, expected: !shown && !intent.isCreate, shows: shown)
    }
    if sharingRun { madeInShare(intent, key: key, &view) }
    tally.applied += 1
    // The incarnation the intent was made on: a create starts its own; any other intent is on
    // the record the app shows (the view is updated below).
    if case .create = intent {
      provenance.setIncarnation(of: id, id)
    } else {
      provenance.setIncarnation(of: id, view.visibleRecord(key)?.creator ?? creators[key])
    }
    switch intent {
    case .create(_, _, let values):
      // (A second create of a record is a re-create, after a delete: a new incarnation.)
      provenance.created(key, by: id, on: Int32(index))
      wrote(values, key, id)
    case .set(_, let values):
      wrote(values, key, id)
    case .delete:
      deleters[key] = id
      ownDeletes[key] = id
      knownDeletes[key] = id
      stepDeleted.insert(key)
    case .append(_, let field, let text):
      provenance.wrote(text, to: field, of: key, by: id)
    case .replace:
      break
    }
    update(&view, env: env, effects: &effects)
    // A change the app added to its engine's state: the engine schedules a send (after the
    // scenario's `autosync` pause; none with `autosync off` or `automaticallySync` false).
    let engine = app.syncEngine
    if !engine.state.pendingRecordZoneChanges.isEmpty || !engine.state.pendingDatabaseChanges.isEmpty || engine.state.hasPendingUntrackedChanges
      || (sharesHere && hasPending(.shared))
    {
      scheduleSend(view, effects: &effects)
    }
    return made(id, key, kind, view, env, ignored: nil)
  }

  /// A record an intent's reference names that the device does not show, if any.
  func missingReference(_ intent: UserIntent, _ view: DeviceState) -> RecordKey? {
    let values: [FieldWrite]
    switch intent {
    case .create(_, _, let v), .set(_, let v): values = v
    default: return nil
    }
    for w in values {
      if case .ref(let target) = w.value, view.visibleRecord(target) == nil { return target }
    }
    return nil
  }

  /// An intent the app refused: expected when the device did not show the record (a set,
  /// delete or append of a record it never got, or already deleted); otherwise the app failed to
  /// make a change of its own schema, which the report counts against it.
  func refused(_ id: IntentID, _ key: RecordKey, _ kind: IntentKind, _ view: DeviceState, _ env: DeviceEnvironment, expected: Bool, shows: Bool)
    -> Intent
  {
    let record = key < RecordKey(ids.count) ? ids[Int(key)] : "record \(key)"
    if expected {
      tally.refusedAsExpected += 1
      return made(id, key, kind, view, env, ignored: "the app does not show \(record)")
    }
    let why =
      shows ? "the app refused it though it shows \(record)" : "the app refused to make \(record) (\(kindName(kind)) of its own schema)"
    tally.refused.append("i\(id) (\(name) \(kind.verb) \(record) at \(env.now)): \(why)")
    return made(id, key, kind, view, env, ignored: why)
  }

  func kindName(_ kind: IntentKind) -> String {
    switch kind {
    case .create(let type, _): "a " + schema.types[Int(type)].name
    default: kind.verb
    }
  }

  /// Notes which intent wrote each value (a text's value as a piece of text it wrote).
  func wrote(_ values: [FieldWrite], _ key: RecordKey, _ id: IntentID) {
    for w in values {
      if case .text(let t) = w.value {
        provenance.wrote(t.string, to: w.field, of: key, by: id)
      } else {
        provenance.wrote(w.value, to: w.field, of: key, by: id)
      }
    }
  }

  func made(_ id: IntentID, _ key: RecordKey, _ kind: IntentKind, _ view: DeviceState, _ env: DeviceEnvironment, ignored: String?) -> Intent {
    Intent(
      id: id, device: Int32(index), trueTime: env.now, deviceTime: view.clock.read(at: env.now), record: key, kind: kind, ordinal: 0,
      context: CausalContext(), ignored: ignored)
  }

  // MARK: AppDriver: inputs

  package func handle(_ input: DeviceInput, view: inout DeviceState, env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    guard failure == nil else { return }
    now = env.now
    nextRuleID = env.nextIntentID
    clock.deviceTime = view.clock.read(at: env.now)
    if provenance.behaviour != nil { (stepInput, stepTime) = (Self.describe(input), env.now) }
    if view.config.sharing { checkSharing(view) }
    signedIn = view.account
    switch input {
    case .kill:
      // Memory goes: what the engine had pending and not written to disk is checked at the
      // next launch.
      if let app {
        killed = (env.now, Set(pendingKeys(app)), Set((stateUpdated + sharedStateUpdated).compactMap { keys[$0.recordID.recordName] }))
      }
      stateUpdated = []
      sharedStateUpdated = []
      app = nil
      inFlight = .none
      operation = .idle
      operationScope = .private
      queue = []
      sendGeneration &+= 1
      retryGeneration &+= 1
      timeoutGeneration &+= 1
      stateGeneration &+= 1
      stateUpdateDue = false
      holdUntil = .zero
      link.requests = []
      view.driverNewSession()
      return
    case .connectivity(let up):
      link.online = up
      view.driverSetOnline(up)
      if !up {
        timeoutGeneration &+= 1
        view.driverNewSession()
        interrupt(error: .networkUnavailable, effects: &effects)
      } else if automatic {
        enqueue(.send(.init()), .scheduled)
        enqueue(.fetch(.init()), .scheduled)
      }
    case .syncNow:
      enqueue(.send(.init()), .manual)
      enqueue(.fetch(.init()), .manual)
    case .sendNow:
      enqueue(.send(.init()), .manual)
    case .fetchNow:
      enqueue(.fetch(.init()), .manual)
    case .timer(.autosync, let generation):
      if generation == sendGeneration { enqueue(.send(.init()), .scheduled) }
    case .timer(.retry, let generation):
      if generation == retryGeneration, automatic {
        if fetchFirst { enqueue(.fetch(.init()), .scheduled) }
        enqueue(.send(.init()), .scheduled)
        enqueue(.fetch(.init()), .scheduled)
      }
    case .timer(.timeout, let generation):
      // No answer in time (a lost request or reply): what was sent stays pending, the delegate
      // hears of a network failure, and the engine tries again, as CKSyncEngine does.
      guard generation == timeoutGeneration, !isIdle else { break }
      view.driverNewSession()
      interrupt(error: .networkFailure, effects: &effects)
      if automatic { retry(after: .seconds(5), env: env, effects: &effects) }
    case .timer(.stateUpdate, let generation):
      if generation == stateGeneration {
        stateUpdateDue = false
        if link.stateChanged { deliverState() }
        if link.sharedStateChanged { deliverSharedState() }
      }
    case .timer:
      break
    case .message(.notify):
      if automatic { enqueue(.fetch(.init()), .scheduled) }
    case .message(.pushReply(let id, let results)):
      guard case .push(let sent, let changes, let records) = inFlight, sent == id else { return }
      inFlight = .none
      timeoutGeneration &+= 1
      pushed(changes, records, results, &view, env: env, effects: &effects)
    case .message(.fetchReply(let id, let reply)):
      guard case .fetch(let sent) = inFlight, sent == id else { return }
      inFlight = .none
      timeoutGeneration &+= 1
      if case .shared(let records, let revoked, let readOnly, let gone, let token, let more) = reply {
        fetchedShared(
          records, revoked: revoked, readOnly: readOnly, gone: gone, token: token, moreComing: more, request: id, &view, env: env, effects: &effects)
      } else {
        fetched(reply, &view, env: env, effects: &effects)
      }
    case .message(.zonesReply(let id, let results)):
      guard case .zones(let sent, let changes) = inFlight, sent == id else { return }
      inFlight = .none
      timeoutGeneration &+= 1
      zonesAnswered(changes, results, &view, env: env, effects: &effects)
    case .background:
      notSimulated("a background budget")
    case .clockJump:
      notSimulated("a clock jump")
    case .deletedZone(let epoch):
      deletedZone(epoch: epoch, &view, env: env, effects: &effects)
    case .accountChanged(let account):
      changeAccount(to: account, &view, env: env, effects: &effects)
    case .upgraded:
      notSimulated("an app upgrade")
    case .message:
      break
    }
    update(&view, env: env, effects: &effects)
  }

  // MARK: Scheduling

  /// Whether the engine syncs on its own: the app's configuration says so
  /// (`automaticallySync`).
  var automatic: Bool { app?.syncEngine.automaticallySync ?? true }

  var isIdle: Bool {
    if case .none = inFlight { true } else { false }
  }

  var operationIsIdle: Bool {
    if case .idle = operation { true } else { false }
  }

  /// Queues a send or fetch of the private database's engine and, in a run that shares, of the
  /// shared one's after it (a scheduled send of the shared engine only when it has changes).
  func enqueue(_ request: DeviceLink.Request, _ reason: SyncEngine.SyncReason) {
    enqueue(request, reason, scope: .private)
    guard sharesHere else { return }
    if case .send = request, reason == .scheduled, !hasPending(.shared) { return }
    enqueue(request, reason, scope: .shared)
  }

  /// Queues a send or fetch of the engine of `scope` (a scheduled one is not queued twice), and
  /// starts the next if the engine is free.
  func enqueue(_ request: DeviceLink.Request, _ reason: SyncEngine.SyncReason, scope: SyncDatabase.Scope) {
    if reason == .scheduled {
      let already = queue.contains { q in
        guard q.scope == scope else { return false }
        switch (q.request, request) {
        case (.send, .send), (.fetch, .fetch): return q.reason == .scheduled
        default: return false
        }
      }
      if already { return }
    }
    queue.append((request, reason, scope))
  }

  /// A change was made: send it after the scenario's `autosync` pause (the next change in that
  /// time goes in the same batch), as CKSyncEngine schedules a send when pending changes are
  /// added — unless the scenario says `autosync off` or the app `automaticallySync = false`.
  func scheduleSend(_ view: DeviceState, effects: inout [DeviceEffect]) {
    guard automatic, let pause = view.config.autosync else { return }
    sendGeneration &+= 1
    effects.append(.timer(.autosync, after: pause, generation: sendGeneration))
  }

  /// Try again after `delay` (a retry-after, or the engine's back-off).
  func retry(after delay: SimDuration, env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    retryGeneration &+= 1
    holdUntil = max(holdUntil, env.now + delay)
    effects.append(.timer(.retry, after: delay, generation: retryGeneration))
  }

  /// Starts what is queued, one operation at a time — unless offline, signed out, busy, or
  /// waiting out a retry-after (then a manual request waits for it too).
  func pump(_ view: inout DeviceState, env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    // What the app asked for during the step (`sendChanges()`, `fetchChanges()`).
    for (request, scope) in link.requests { queue.append((request, .manual, scope)) }
    link.requests = []
    if link.cancelRequested {
      link.cancelRequested = false
      cancel(&view, effects: &effects)
    }
    while failure == nil, isIdle, operationIsIdle, !queue.isEmpty {
      guard online(view), view.account != nil else { return }
      guard env.now >= holdUntil else {
        effects.append(.timer(.retry, after: holdUntil - env.now, generation: retryGeneration))
        return
      }
      let (request, reason, scope) = queue.removeFirst()
      // (An engine the app no longer has, or does not have in this run, does nothing.)
      if scope == .shared, !sharesHere { continue }
      operationScope = scope
      switch request {
      case .send(let options): startSend(.init(reason: reason, options: options), &view, env: env, effects: &effects)
      case .fetch(let options): startFetch(.init(reason: reason, options: options), &view, env: env, effects: &effects)
      }
    }
  }

  func online(_ view: DeviceState) -> Bool { link.online }

  /// The request just sent gets no answer within the device's request timeout: give up on it.
  func awaitAnswer(_ view: DeviceState, effects: inout [DeviceEffect]) {
    timeoutGeneration &+= 1
    effects.append(.timer(.timeout, after: view.config.requestTimeout, generation: timeoutGeneration))
  }

  /// A reply on its way downloads assets over a slow link: the request times out after them.
  package func downloading(for transfer: SimDuration, view: DeviceState, effects: inout [DeviceEffect]) {
    guard !isIdle else { return }
    timeoutGeneration &+= 1
    effects.append(.timer(.timeout, after: view.config.requestTimeout + transfer, generation: timeoutGeneration))
  }

  /// The app's engine: cancel what is under way (`cancelOperations()`): a request in flight is
  /// abandoned, and what it carried stays pending.
  func cancel(_ view: inout DeviceState, effects: inout [DeviceEffect]) {
    guard !isIdle || !operationIsIdle else { return }
    timeoutGeneration &+= 1
    view.driverNewSession()
    interrupt(error: .operationCancelled, effects: &effects)
  }

  /// Delivers `event` to the engine of `scope` — by default that of the operation under way.
  func deliver(_ event: SyncEngine.Event, to scope: SyncDatabase.Scope? = nil) {
    guard failure == nil else { return }
    let engine = self.engine(scope ?? operationScope)
    appEntries &+= 1
    do { try engine.deliver(event) } catch { fail(error.description) }
    if let misuse = link.misuse { fail(misuse) }
  }

  /// Tells the app its engine's state changed (`stateUpdate`), with the engine it has now.
  func deliverState() {
    link.stateChanged = false
    stateUpdated = launched().syncEngine.state.pendingRecordZoneChanges
    deliver(.stateUpdate(.init(stateSerialization: launched().syncEngine.state.serialization)), to: .private)
  }

  /// The app's engine of `scope` (its private one when it has no shared one).
  func engine(_ scope: SyncDatabase.Scope) -> SyncEngine {
    let app = launched()
    if scope == .shared, let shared = app.sharedSyncEngine { return shared }
    return app.syncEngine
  }

  /// The engine's state changed: `stateUpdate` follows about 100 ms later, coalescing the
  /// changes meanwhile ("around 100 milliseconds", Apple's CloudKit engineer on
  /// apple/sample-cloudkit-sync-engine issue 5).
  func stateChanged(effects: inout [DeviceEffect]) {
    guard link.stateChanged || link.sharedStateChanged, !stateUpdateDue, app != nil else { return }
    stateUpdateDue = true
    stateGeneration &+= 1
    effects.append(.timer(.stateUpdate, after: .milliseconds(100), generation: stateGeneration))
  }

  /// The records with a pending change in the app's engine.
  /// The keys of the records with changes pending in `app`'s engine, in the order added (read
  /// again only when the engine's list moved since the last read).
  func pendingKeys(_ app: App) -> [RecordKey] {
    let state = app.syncEngine.state
    let pending: [RecordKey]
    if let cache = pendingCache, cache.state === state, cache.version == state.recordChangesVersion {
      pending = cache.keys
    } else {
      pending = state.pendingRecordZoneChanges.compactMap { keys[$0.recordID.recordName] }
      pendingCache = (state, state.recordChangesVersion, pending)
    }
    guard sharingRun, let shared = app.sharedSyncEngine?.state else { return pending }
    if let cache = sharedPendingCache, cache.state === shared, cache.version == shared.recordChangesVersion { return pending + cache.keys }
    let sharedPending = shared.pendingRecordZoneChanges.compactMap { keys[$0.recordID.recordName] }
    sharedPendingCache = (shared, shared.recordChangesVersion, sharedPending)
    return pending + sharedPending
  }

  /// A fault the app's device does not simulate yet: ignored, and said once per kind in the
  /// report, with when it first came.
  func notSimulated(_ what: String) {
    guard !notSimulatedKinds.contains(what) else { return }
    notSimulatedKinds.insert(what)
    notSimulated.append("\(name) at \(now): \(what) (not simulated yet on a device an app drives; ignored)")
  }

  /// The app's code could not be run: the device stops here, and the report says why.
  func fail(_ reason: String) {
    if failure == nil { failure = "\(name) at \(now): \(reason)" }
  }

  func fieldValues(_ type: Int32, _ writes: [FieldWrite]) -> [(field: String, value: SyncValue)] {
    writes.map { (schema.types[Int(type)].fields[Int($0.field)].name, intentValue($0.value)) }
  }
}

/// A value handed across the simulator's own thread (the app runs only there).
struct Unchecked<T>: @unchecked Sendable {
  let value: T
  init(_ value: T) { self.value = value }
}

extension UserIntent {
  var isCreate: Bool {
    if case .create = self { true } else { false }
  }
}

/// Settings bound in tests around the drivers they make (read when a driver is made).
package enum DriverTestSettings {
  /// Drivers made in its scope walk every step for the delete rules an app carried out, even one
  /// that changed nothing it shows: the runs must be those of the shortcut.
  @TaskLocal package static var walksEveryStepForRules = false
}
