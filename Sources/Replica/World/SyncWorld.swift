@_spi(Kernel) import Simulator

/// N devices and the server on the kernel's event loop, network and clocks: the shell that
/// carries out what the pure state machines ask for.
///
///     var world = SyncWorld(config)
///     world.schedule(.intent(device: 0, .create(type: 0, key: 0, values: [])), at: .zero)
///     world.run(until: VirtualTime.zero + .seconds(10))
///     world.settle()
///     world.devices[0].visibleRecords   // judged by the oracle
package struct SyncWorld: Sendable {
  /// Plain data, so the event queue moves entries without reference counting; messages in
  /// flight wait in ``inFlight`` until delivered.
  enum Event: Sendable {
    case deliver(slot: Int32, duplicate: Bool)
    case timer(device: Int32, kind: TimerKind, generation: UInt32)
    case action(Int32)
  }

  struct InFlight: Sendable {
    var transmission: Transmission
    var message: Message
    var session: UInt32
    /// Deliveries still scheduled (2 when the network duplicated the message).
    var remaining: Int8
    /// The message's number (``messagesSent`` when sent), for ``WorldEvent``s.
    var seq: Int
  }

  package let config: WorldConfig
  package internal(set) var context: MergeContext
  package internal(set) var devices: [DeviceState]
  /// One server (private database) per account.
  package internal(set) var servers: [ServerState]
  /// The first account's server: the only one unless the scenario declares accounts.
  package var server: ServerState { servers[0] }
  /// Per record: the account it belongs to (its creator's account when it was made, or the
  /// one its device next signed into; -1 until then).
  package internal(set) var recordAccounts: [Int32] = []
  /// The shares and each account's shared database (empty without `share` lines).
  package internal(set) var sharing: SharingState
  /// With sharing, per record: the account its creating device was signed into (-1: none), to
  /// tell a record made in a share from one carried over from another account.
  var creatorAccounts: [Int32] = []
  /// With sharing, per record: its zone (0: the app's zone), as the scenario made it, or as the
  /// record it was made under in a share has it.
  package internal(set) var recordZones: [Int32] = []
  package internal(set) var log = IntentLog()
  package internal(set) var facts = WorldFacts()
  package internal(set) var trace: TraceRecorder
  /// With ``WorldConfig/keepsEvents``: everything that happened, typed, for people (pictures,
  /// explanations, the JSON Lines trace). Never hashed.
  package internal(set) var events: [WorldEvent] = []
  /// Per device: what the oracle needs that the device never reads (causal contexts,
  /// reappearances).
  package internal(set) var ledgers: [CausalLedger]
  package internal(set) var network: Network
  /// The devices' environment: the time (set before each input) and the policy.
  var env: DeviceEnvironment
  var loop = EventLoop<Event>(minimumCapacity: 64)
  var actions: [WorldAction] = []
  let serverNode: NodeID
  /// One network stream per sending node: removing one device's actions (as the shrinker does)
  /// leaves the other devices' delays and losses as they were.
  var wires: [SimRandom]
  var pushRNG: SimRandom
  var effects: [DeviceEffect] = []
  var inFlight: [InFlight?] = []
  var freeSlots: [Int32] = []
  package internal(set) var messagesSent = 0
  /// Record copies carried by the messages sent (writes, results, fetched records): the work
  /// that grows with devices × changes, for benchmarks. Never hashed.
  package internal(set) var recordsSent = 0
  /// When a message was last delivered (settle's time to converge ends there, not at the last
  /// stale timer).
  package internal(set) var lastDelivery: VirtualTime = .zero
  /// `unique=key-name`: the record each unique key names, per account, type and key values.
  var keyNames: [UniqueName: RecordKey] = [:]
  /// Per device: the account it was last signed into (a record made while signed out takes its
  /// key-derived name in the account it will most likely sign into again).
  var lastAccounts: [Int32] = []
  /// Per device, the instant its account last changed (nil: never): a record it stops showing
  /// then goes with the account, and its showing again at a sign-in is no reappearance.
  package internal(set) var accountChangedAt: [VirtualTime?] = []
  /// `unique=key-name`: a scenario record that is another's by its key → that record.
  package internal(set) var aliases: [RecordKey: RecordKey] = [:]
  /// Per record key, its latest effective create (0: none yet): a create of a key that has one
  /// is a re-create.
  var latestCreates: [IntentID] = []
  /// Per device, the user's app driving it instead of the built-in engine (empty: none).
  package internal(set) var drivers: [DriverBox?] = []
  /// The transfer time of the asset bytes of the request a device just sent (added to the
  /// request's timeout when the device arms it).
  var pendingTransfer: SimDuration = .zero

  /// Drives device `d` with the user's app and engine from now on.
  package mutating func drive(device d: Int, with driver: any AppDriver) {
    if drivers.isEmpty {
      drivers = Array(repeating: nil, count: devices.count)
      // The rules NSPersistentCloudKitContainer puts on a model (relationships optional, no
      // unique constraints, …) are that store's, not the server's: an app's own engine saves
      // records of any type.
      for a in servers.indices {
        servers[a].appZones = []
        servers[a].acceptsType = servers[a].acceptsType.map { _ in true }
      }
    }
    // An app's database starts with the zones it declares (an account that used the app
    // before); any other zone it must save first.
    for a in servers.indices {
      for zone in driver.initialZones where !servers[a].appZones!.contains(zone) { servers[a].appZones!.append(zone) }
    }
    drivers[d] = DriverBox(driver)
  }

  package init(_ config: WorldConfig) {
    self.config = config
    context = config.context ?? MergeContext(schema: config.schema)
    var net = Network(conditions: config.network)
    let names = config.deviceNames
    let ranks = names.indices.sorted { names[$0] < names[$1] }
    var rankOf = [Int32](repeating: 0, count: names.count)
    for (rank, i) in ranks.enumerated() { rankOf[i] = Int32(rank) }
    var ds: [DeviceState] = []
    for (i, name) in names.enumerated() {
      _ = net.addNode()
      var c = DeviceConfig(index: Int32(i), name: name, rank: rankOf[i], deviceCount: names.count, autosync: config.autosync)
      c.causalMetadata = config.policy.tracksVersions
      c.reportsCopies = config.trackCausality || config.recordObservations
      c.warmsBatches = config.warmsBatches ?? (names.count >= batchWarmingDevices)
      c.account = config.deviceAccounts?[i] ?? 0
      c.appVersion = config.appVersions?[i] ?? .max
      c.sharing = !config.shares.isEmpty
      ds.append(DeviceState(config: c, clock: config.clocks[i], seed: config.seed))
    }
    serverNode = net.addNode()
    devices = ds
    lastAccounts = ds.map { $0.account ?? 0 }
    accountChangedAt = Array(repeating: nil, count: ds.count)
    network = net
    servers = config.accounts.map { _ in ServerState(schema: config.schema, conditions: config.server) }
    sharing = SharingState(shares: config.shares.count, accounts: config.shares.isEmpty ? 0 : config.accounts.count)
    for (s, root) in config.shareRoots.enumerated() where s < sharing.shares.count { sharing.shares[s].root = root }
    for (s, zone) in config.shareZones.enumerated() where s < sharing.shares.count { sharing.shares[s].zone = zone }
    recordZones = config.recordZones
    sharing.judgesPerRecord = sharing.shares.contains { $0.root != nil || $0.zone != 0 } || recordZones.contains { $0 != 0 }
    trace = TraceRecorder(mode: .hashOnly)
    ledgers = Array(repeating: CausalLedger(), count: names.count)
    env = DeviceEnvironment(policy: config.policy, context: context)
    wires = (0...names.count).map { SimRandom(seed: config.seed, stream: "network", index: UInt64($0)) }
    pushRNG = SimRandom(seed: config.seed, stream: "push")
  }

  package var now: VirtualTime { loop.now }

  /// The account record `key` belongs to (the first while it belongs to none).
  package func account(ofRecord key: RecordKey) -> Int {
    Int(key) < recordAccounts.count && recordAccounts[Int(key)] >= 0 ? Int(recordAccounts[Int(key)]) : 0
  }

  /// The server's copy of record `key`, in its account's database (read in place: the server
  /// is not copied).
  package func serverRecord(_ key: RecordKey) -> RecordState? {
    let a = account(ofRecord: key)
    return servers.withUnsafeBufferPointer { $0[a].records[key] }
  }

  /// Whether the server of its account holds record `key`, live or deleted — and, given
  /// `creator`, that incarnation of it (read in place: no copy of the record).
  package func serverHolds(_ key: RecordKey, createdBy creator: IntentID? = nil) -> Bool {
    let a = account(ofRecord: key)
    return servers.withUnsafeBufferPointer { s in
      guard let creator else { return s[a].records.contains(key) }
      return s[a].records.creator(of: key) == creator
    }
  }

  /// Whether the server of its account holds record `key` live (read in place).
  package func serverIsLive(_ key: RecordKey) -> Bool {
    let a = account(ofRecord: key)
    return servers.withUnsafeBufferPointer { $0[a].records.isLive(key) }
  }

  /// Whether device `d` shows the record (read in place: the device is not copied).
  package func shows(device d: Int, _ key: RecordKey) -> Bool {
    devices.withUnsafeBufferPointer { $0[d].shows(key) }
  }

  /// Whether device `d` is signed into the account record `key` belongs to (read in place).
  package func isSignedIn(device d: Int, toAccountOf key: RecordKey) -> Bool {
    deviceAccount(d).map(Int.init) == account(ofRecord: key)
  }

  /// What device `d` shows, in key order (the device is not copied).
  package func visibleRecords(device d: Int) -> [RecordState] {
    // (The device's store read, not the device: calling a property of the device copied it.)
    devices.withUnsafeBufferPointer { $0[d].store.liveValues }
  }

  /// Whether device `d` is signed in and holds unsent changes or waits out an error — a stalled
  /// sync, after settle (read in place).
  package func mayHaveStalled(device d: Int) -> Bool {
    devices.withUnsafeBufferPointer { $0[d].account != nil && ($0[d].waitingOn != nil || $0[d].outbox.hasSendable) }
  }

  /// The account device `d` is signed into (read in place: the device is not copied).
  @inline(__always)
  package func deviceAccount(_ d: Int) -> Int32? {
    devices.withUnsafeBufferPointer { $0[d].account }
  }

  /// Whether device `d` holds the file of `content` (read in place), and if not, why its file went.
  package func file(of content: Content, device d: Int) -> (held: Bool, lost: (why: DeviceState.FileLoss, at: VirtualTime)?) {
    devices.withUnsafeBufferPointer { ($0[d].holdsFile(of: content), $0[d].lostFiles[content.name]) }
  }

  /// Device `d`'s fixed settings (the device is not copied).
  package func deviceConfig(_ d: Int) -> DeviceConfig {
    devices.withUnsafeBufferPointer { $0[d].config }
  }
  /// The most device × record table slots ``reserve(actions:intents:records:)`` makes up front
  /// (about 120 bytes each, with the device's causal context of the record).
  static let reservedSlotsLimit = 8_000_000

  /// Whether ``events`` are being kept.
  @inlinable package var keepsEvents: Bool { config.keepsEvents }
  package var eventsProcessed: Int { loop.processedCount }

  /// Makes room for a timeline of `actions` actions, `intents` of them user intents, on
  /// `records` records, so that the world's logs and each device's tables do not regrow while
  /// it runs (a speed-up only: nothing else changes). Tables grown a key at a time left the
  /// copies of each doubling behind, a fifth of the memory of a run of 1,000 devices and 5,000
  /// records; they are made full-size up front unless that would reserve more than
  /// ``reservedSlotsLimit`` slots (devices × records) in all, most never touched.
  package mutating func reserve(actions count: Int, intents: Int, records: Int = 0) {
    if records > 0, devices.count <= Self.reservedSlotsLimit / records {
      for d in devices.indices { devices[d].store.reserve(keys: records) }
      if config.trackCausality { for d in ledgers.indices { ledgers[d].reserve(records: records) } }
    }
    actions.reserveCapacity(actions.count + count)
    log.reserve(intents)
    if config.trackCausality { facts.reachedServer.reserveCapacity(facts.reachedServer.count + intents) }
    inFlight.reserveCapacity(16)
    freeSlots.reserveCapacity(16)
  }

  /// Schedules an action. Actions at one time run in the order they were scheduled.
  package mutating func schedule(_ action: WorldAction, at time: VirtualTime) {
    actions.append(action)
    loop.schedule(.action(Int32(actions.count - 1)), at: max(time, loop.now))
  }

  /// Runs every event up to and including `limit`, or until `maxEvents` have run (a guard
  /// against a pathological run: it is then recorded as not settled, and judged as divergence).
  package mutating func run(until limit: VirtualTime, maxEvents: Int = 20_000_000) {
    let cap = loop.processedCount + maxEvents
    while let (_, event) = loop.next(until: limit) {
      handle(event)
      if loop.processedCount >= cap {
        facts.settled = false
        facts.unsettledReason = "the run was stopped after \(maxEvents) events before settle (an event storm)"
        return
      }
    }
  }

  // MARK: Events

  mutating func handle(_ event: Event) {
    switch event {
    case .action(let index):
      perform(actions[Int(index)])
    case .timer(let d, let kind, let generation):
      deliverToDevice(d, .timer(kind, generation: generation))
    case .deliver(let slot, let duplicate):
      let entry: InFlight
      if inFlight[Int(slot)]!.remaining <= 1 {
        // The last delivery: move the entry out (no copy of the message to retain and release).
        var taken: InFlight? = nil
        swap(&taken, &inFlight[Int(slot)])
        entry = taken!
        freeSlots.append(slot)
      } else {
        inFlight[Int(slot)]!.remaining -= 1
        entry = inFlight[Int(slot)]!
      }
      deliver(entry.transmission, entry.message, session: entry.session, seq: entry.seq, duplicate: duplicate)
    }
  }

  /// Keeps an event for people, when events are kept (callers guard costly payloads with
  /// ``WorldConfig/keepsEvents``).
  @inline(__always)
  mutating func note(_ what: WorldEvent.What) {
    if config.keepsEvents { events.append(WorldEvent(time: now, what: what)) }
  }

  func node(_ n: NodeID) -> WorldNode { n == serverNode ? .server : .device(n.rawValue) }

  mutating func deliver(_ t: Transmission, _ message: Message, session: UInt32, seq: Int, duplicate: Bool) {
    let to = t.to
    if to == serverNode {
      let from = Int(t.from.index)
      // A request cut off at the device (kill, suspension, offline) never completes.
      let current = devices[from].session == session
      guard current, network.accepts(t) else {
        trace.record(WorldTrace.drop, at: now, node: t.from.rawValue, message.code, Int64(to.rawValue), 1)
        note(.arrived(message: seq, at: .server, current ? .refused : .cutOff, duplicate: duplicate))
        return
      }
      trace.record(WorldTrace.deliver, at: now, node: to.rawValue, message.code, Int64(t.from.rawValue), Int64(message.recordCount))
      note(.arrived(message: seq, at: .server, .delivered, duplicate: duplicate))
      lastDelivery = now
      serverReceive(message, from: Int32(from), seq: seq)
    } else {
      guard network.accepts(t) else {
        trace.record(WorldTrace.drop, at: now, node: t.from.rawValue, message.code, Int64(to.rawValue), 2)
        note(.arrived(message: seq, at: node(to), .refused, duplicate: duplicate))
        return
      }
      trace.record(WorldTrace.deliver, at: now, node: to.rawValue, message.code, Int64(t.from.rawValue), Int64(message.recordCount))
      note(.arrived(message: seq, at: node(to), .delivered, duplicate: duplicate))
      lastDelivery = now
      deliverToDevice(Int32(to.index), .message(message))
    }
  }

  mutating func perform(_ action: WorldAction) {
    switch action {
    case .intent(let d, let userIntent):
      var refusal: String?
      if case .create(_, let key, _) = userIntent, Int(key) < latestCreates.count, latestCreates[Int(key)] != 0 {
        refusal = recreateRefusal(of: key, device: d)
        if refusal == nil { markRecreated(key) }
      }
      let intent = performIntent(device: d, resolvingNames(userIntent, device: d), trigger: 0, refused: refusal)
      // (A user's app carries out the schema's delete rules itself: its driver reports them.)
      if case .delete = userIntent, intent.ignored == nil, drivers.isEmpty || drivers[Int(d)]?.driver.runsItsOwnDeleteRules != true {
        // (An app keeps no tombstone: a record never sent may be nowhere now but in the log.)
        runDeleteRules(device: d, deleted: intent.record, by: intent.id, type: drivers.isEmpty ? nil : typeFromLog(intent.record))
      }
    case .sync(let d):
      deliverToDevice(d, .syncNow)
    case .send(let d):
      deliverToDevice(d, .sendNow)
    case .fetch(let d):
      deliverToDevice(d, .fetchNow)
    case .kill(let d):
      trace.record(WorldTrace.lifecycle, at: now, node: d, 1)
      note(.device(d, .killed))
      deliverToDevice(d, .kill)
    case .background(let d, let budget):
      trace.record(WorldTrace.lifecycle, at: now, node: d, 2, budget.nanoseconds)
      note(.device(d, .background(budget: budget)))
      deliverToDevice(d, .background(budget: budget))
    case .clockJump(let d, let by):
      trace.record(WorldTrace.lifecycle, at: now, node: d, 3, by.nanoseconds)
      note(.device(d, .clockJumped(by: by)))
      facts.clockJumps.append((now, d, by))
      deliverToDevice(d, .clockJump(by))
    case .syncAll:
      for d in devices.indices where network.isOnline(NodeID(index: d)) { deliverToDevice(Int32(d), .syncNow) }
    case .setOnline(let ds, let online):
      for d in ds {
        trace.record(WorldTrace.lifecycle, at: now, node: d, online ? 4 : 5)
        note(.device(d, online ? .online : .offline))
        network.setOnline(NodeID(index: Int(d)), online)
        deliverToDevice(d, .connectivity(online))
      }
    case .server(let up):
      trace.record(WorldTrace.lifecycle, at: now, node: serverNode.rawValue, up ? 6 : 7)
      note(.server(up: up))
      network.setUp(serverNode, up)
    case .freeStorage(let bytes):
      trace.record(WorldTrace.lifecycle, at: now, node: serverNode.rawValue, 8, bytes)
      note(.storageFreed(bytes: bytes))
      servers[0].freeStorage(bytes)
    case .file(let d, let key, let field, let changed):
      let name =
        changed
        ? devices[Int(d)].changeFile(of: key, field: Int(field), at: now) : devices[Int(d)].deleteFile(of: key, field: Int(field), at: now)
      trace.record(WorldTrace.lifecycle, at: now, node: d, 15, Int64(key) << 8 | Int64(field) << 1 | (changed ? 1 : 0), name == nil ? 0 : 1)
      if config.recordObservations, !changed, let name { facts.observations.append(.fileDeleted(device: d, name: name, at: now)) }
      if !changed, let name { tellDriverOfFiles(device: d, stagingPurged: false, deleted: name) }
      note(.device(d, .file(key, field: field, changed: changed, name: name)))
    case .purgeStaging(let d):
      let n = devices[Int(d)].purgeStaging(at: now)
      tellDriverOfFiles(device: d, stagingPurged: true, deleted: nil)
      if config.recordObservations { facts.observations.append(.stagingPurged(device: d, at: now)) }
      trace.record(WorldTrace.lifecycle, at: now, node: d, 16, Int64(n))
      note(.device(d, .stagingPurged(files: n)))
    case .upgrade(let d, let version):
      trace.record(WorldTrace.lifecycle, at: now, node: d, 12, Int64(version))
      note(.device(d, .upgraded(to: version)))
      deliverToDevice(d, .upgraded(to: version))
    case .account(let d, let account):
      trace.record(WorldTrace.lifecycle, at: now, node: d, 11, account.map(Int64.init) ?? -1)
      note(.device(d, .account(account)))
      accountChangedAt[Int(d)] = now
      if config.recordObservations { facts.observations.append(.accountChanged(device: d, at: now)) }
      deliverToDevice(d, .accountChanged(to: account))
      // Records made while signed out belong to the account signed into next.
      if let account {
        lastAccounts[Int(d)] = account
        for (k, owner) in recordAccounts.enumerated() where owner < 0 && Int(k) < log.recordCount {
          if log.intents.first(where: { $0.record == RecordKey(k) && $0.ignored == nil })?.device == d { recordAccounts[k] = account }
        }
      }
    case .deleteZone(let d, let reason):
      deleteZone(by: d, reason: reason, tellingTheApp: true)
    case .share(let d, let action):
      performShare(action, device: d)
    case .reject(var rule):
      rule.until = max(rule.until, now)
      trace.record(WorldTrace.lifecycle, at: now, node: serverNode.rawValue, 9, rule.error.code)
      note(.rejecting(rule))
      for a in servers.indices { servers[a].addRule(rule) }
    }
  }

  /// The zone of device `d`'s account (a reset: the first account's) is deleted for `reason`:
  /// by the user on `d` (`delete-zone`, or an app's own zone delete reaching the server), in
  /// Settings, or by a reset. The app that deleted its zone deletes its local data with it
  /// (`tellingTheApp`: the user's intent on the device; an app whose own request deleted it has
  /// done so already); a purge in Settings does not touch the app: it learns at its next
  /// request.
  mutating func deleteZone(by d: Int32?, reason: ZoneDeletionReason, tellingTheApp: Bool) {
    // A signed-out device has no zone to delete (neither the app nor Settings can).
    if let d, devices[Int(d)].account == nil { return }
    trace.record(WorldTrace.lifecycle, at: now, node: d ?? serverNode.rawValue, 10, reason.code)
    note(.zoneDeleted(by: d, reason))
    let a = d.flatMap { devices[Int($0)].account }.map(Int.init) ?? 0
    if let d {
      deleteEverything(by: d, reason: reason, account: a)
      env.context = context
    }
    facts.zoneDeletions.append((now, d, reason))
    // The zone's shares go with it (logged while its records are still there to name).
    if hasSharing { sharesGone(owner: Int32(a)) }
    servers[a].deleteZone(reason)
    if tellingTheApp, let d, reason == .deleted { deliverToDevice(d, .deletedZone(epoch: servers[a].zoneEpoch)) }
  }

  /// A user deleting the app's data: a delete intent by device `d` for every record in the zone
  /// (what the server holds), made knowing the server's copies; for every record whose upload
  /// a device of the account has sent without a clear answer (it may be in the zone: the
  /// delete is concurrent with it, so either outcome is right); and, when the app itself
  /// deletes its zone (`delete-zone`), for everything the app shows on `d`. Records no device
  /// has tried to upload are not in the zone; a purge in Settings leaves them be.
  mutating func deleteEverything(by d: Int32, reason: ZoneDeletionReason, account a: Int) {
    let server = servers[a]
    var keys: [RecordKey] = []
    for k in 0..<log.recordCount {
      let key = RecordKey(k)
      let uncertain = devices.contains { $0.account.map(Int.init) == a && !$0.maybeInZone.isEmpty && $0.maybeInZone.contains(key) }
      if reason != .deleted, !context.recreatedKeys.isEmpty, context.isRecreated(key), let copy = server.records[key],
        let mine = devices[Int(d)].visibleRecord(key), mine.creator > copy.creator
      {
        // The device shows the record made again after it deleted the one the zone holds: the
        // zone's is deleted already, and the device's own was never in the zone.
        continue
      }
      // (A shared record the device shows is in its owner's zone, not this one.)
      let inThisZone = !hasSharing || !devices[Int(d)].sharedKeys.contains(key)
      if server.records.isLive(key) || uncertain || (reason == .deleted && inThisZone && shows(device: Int(d), key)) { keys.append(key) }
    }
    let reading = devices[Int(d)].clock.read(at: now)
    for key in keys {
      // Deleting what the zone holds is knowing it: the user deletes the copies the server has.
      if let copy = server.records[key] {
        if config.trackCausality { ledgerTook(copy, device: d) }
        if config.recordObservations { facts.observations.append(.received(device: d, copy: copy, at: now)) }
      }
      var intent = Intent(
        id: log.nextID, device: d, trueTime: now, deviceTime: reading, record: key, kind: .delete, ordinal: 0, context: CausalContext(),
        ignored: nil)
      ledgers[Int(d)].made(&intent, ordinal: log.nextOrdinal(on: key), tracking: config.trackCausality, log: log, applied: reason == .deleted)
      log.append(intent)
      if env.hasReferences, config.trackCausality { noteDeleteKnowledge(intent, device: d) }
      if reason != .deleted { facts.settingsDeletes.append(intent.id) }
      // The server applies it: the zone goes with everything in it.
      if config.trackCausality { facts.reachedServer.append(true) }
      if !drivers.isEmpty { context.zoneDeletes[key] = intent.id }
      if server.records.isLive(key) { facts.serverEvents.append(.deleted(key, by: intent.id, at: now)) }
      if config.recordObservations { facts.observations.append(.intent(intent.id)) }
      trace.record(WorldTrace.intent, at: now, node: d, Int64(intent.id), Int64(intent.record), 0)
      note(.intent(intent.id))
    }
  }

  /// A delete rule a user's app carried out, logged as the rule's intent on the device (as
  /// ``runDeleteRules(device:deleted:by:type:)`` makes them for the built-in engine).
  mutating func logRule(_ rule: RuleIntent, device d: Int32) {
    let kind: IntentKind = rule.cascade ? .delete : .set([FieldWrite(field: rule.field, value: .null)])
    var intent = Intent(
      id: log.nextID, device: d, trueTime: now, deviceTime: devices[Int(d)].clock.read(at: now), record: rule.record, kind: kind, ordinal: 0,
      context: CausalContext(), ignored: nil)
    assert(intent.id == rule.id, "an app driver gave rule intent \(rule.id) the id \(intent.id) will have")
    intent.trigger = rule.trigger
    ledgers[Int(d)].made(&intent, ordinal: log.nextOrdinal(on: rule.record), tracking: config.trackCausality, log: log)
    log.append(intent)
    if rule.cascade {
      facts.cascades.append(Cascade(intent: intent.id, parent: rule.parent, field: rule.field))
      if env.hasReferences, config.trackCausality { noteDeleteKnowledge(intent, device: d) }
    }
    if config.trackCausality { facts.reachedServer.append(false) }
    if config.recordObservations { facts.observations.append(.intent(intent.id)) }
    trace.record(WorldTrace.intent, at: now, node: d, Int64(intent.id), Int64(intent.record), 0)
    note(.intent(intent.id))
  }

  mutating func deliverToDevice(_ d: Int32, _ input: DeviceInput) {
    var buffer = takeEffectsBuffer()
    env.now = now
    if !drivers.isEmpty, let box = drivers[Int(d)] {
      env.nextIntentID = log.nextID
      box.driver.handle(input, view: &devices[Int(d)], env: env, effects: &buffer)
      carryOut(buffer, device: d)
      // An app that takes any types is a store without rules of its own: the deletions it took
      // in run the schema's delete rules there, as intents it makes (as they do for the
      // built-in engine).
      // So do the records a zone deletion took from it: what stays (a record made since,
      // not yet sent) must not refer to them.
      var deletions: [RecordState] = []
      var wipedByZone: [RecordKey] = []
      if env.hasReferences, !box.driver.runsItsOwnDeleteRules {
        for effect in buffer {
          switch effect {
          case .took(let copy) where copy.isDeleted: deletions.append(copy)
          case .fact(.zoneGone(_, let wiped, _)): wipedByZone += wiped
          default: break
          }
        }
      }
      effects = buffer
      for copy in deletions where !devices[Int(d)].shows(copy.key) {
        runDeleteRules(device: d, deleted: copy.key, by: copy.deletedBy, type: copy.type)
      }
      for key in wipedByZone where !devices[Int(d)].shows(key) {
        guard let by = context.zoneDeletes[key] ?? trigger(for: DeviceState.unknownDelete, deleted: key) else { continue }
        // (No copy of it may be left anywhere: its type is its create's.)
        runDeleteRules(device: d, deleted: key, by: by, type: typeOfRecord(key) ?? typeFromLog(key))
      }
      return
    }
    devices[Int(d)].handle(input, in: env, effects: &buffer)
    carryOut(buffer, device: d)
    effects = buffer
    if env.hasReferences, !devices[Int(d)].ruleChecks.isEmpty { propagateDeleteRules(device: d) }
    if env.dedupes, !devices[Int(d)].dedupeChecks.isEmpty { deduplicate(device: d) }
    if !sharing.refused.isEmpty { retryRefusedShares(device: d) }
  }

  /// Performs a user intent on device `d` (or one a delete rule makes, `trigger` being the
  /// delete that set it off) and records it: the log, the ledger, the trace.
  /// A create the world refuses (`refused`, a re-create the device cannot make) is logged as
  /// ignored without reaching the device.
  @discardableResult
  mutating func performIntent(
    device d: Int32, _ userIntent: UserIntent, trigger: IntentID, keeping kept: RecordKey? = nil, refused: String? = nil
  ) -> Intent {
    var buffer = takeEffectsBuffer()
    env.now = now
    var intent: Intent
    if let refused, case .create(let type, let key, let values) = userIntent {
      intent = Intent(
        id: log.nextID, device: d, trueTime: now, deviceTime: devices[Int(d)].clock.read(at: now), record: key,
        kind: .create(type: type, values: values), ordinal: 0, context: CausalContext(), ignored: refused)
    } else if !drivers.isEmpty && drivers[Int(d)] != nil {
      intent = drivers[Int(d)]!.driver.perform(userIntent, id: log.nextID, view: &devices[Int(d)], env: env, effects: &buffer)
    } else {
      intent = devices[Int(d)].perform(userIntent, id: log.nextID, in: env, byRule: trigger != 0 || kept != nil, effects: &buffer)
    }
    intent.trigger = trigger
    intent.keptInstead = kept
    ledgers[Int(d)].made(&intent, ordinal: log.nextOrdinal(on: intent.record), tracking: config.trackCausality, log: log)
    log.append(intent)
    if env.hasReferences, config.trackCausality, intent.isDelete, intent.ignored == nil { noteDeleteKnowledge(intent, device: d) }
    if case .create = userIntent, intent.ignored == nil {
      let k = Int(intent.record)
      latestCreates._grow(toHold: k, with: 0)
      latestCreates[k] = intent.id
      if context.isRecreated(intent.record) { ledgers[Int(d)].newIncarnation(of: intent.record, creator: intent.id, log: log) }
      recordAccounts._grow(toHold: k, with: -1)
      if recordAccounts[k] < 0 {
        recordAccounts[k] = deviceAccount(Int(d)) ?? -1
        if hasSharing { madeInShare(intent, key: k, device: d) }
      }
    }
    if config.trackCausality { facts.reachedServer.append(false) }
    if config.recordObservations { facts.observations.append(.intent(intent.id)) }
    // A change to a record its device gave up on for good (the user was told) waits with it,
    // never sent: a raw fact for the reference oracle.
    if config.trackCausality, intent.ignored == nil, devices[Int(d)].outbox.entry(for: intent.record)?.failed == true {
      facts.heldByGiveUp.append(intent.id)
      if config.recordObservations { facts.observations.append(.droppedUnsent(device: d, keys: [intent.record], at: now)) }
    }
    trace.record(WorldTrace.intent, at: now, node: d, Int64(intent.id), Int64(intent.record), intent.ignored == nil ? 0 : 1)
    note(.intent(intent.id))
    carryOut(buffer, device: d)
    effects = buffer
    return intent
  }

  /// The reusable effects buffer, taken out (unique, so emptying it keeps its storage without a
  /// copy); put it back with `effects = buffer`.
  mutating func takeEffectsBuffer() -> [DeviceEffect] {
    var buffer: [DeviceEffect] = []
    swap(&buffer, &effects)
    // (Popped one by one: a cycle leaves a few effects, and `removeAll(keepingCapacity:)` goes
    // through the generic `replaceSubrange`, several times the cost of destroying them.)
    while buffer.popLast() != nil {}
    return buffer
  }

  mutating func carryOut(_ buffer: [DeviceEffect], device d: Int32) {
    if config.trackCausality, buffer.count > 2, devices[Int(d)].config.warmsBatches { _keepLoads(ledgers[Int(d)].warm(buffer, log: log)) }
    for effect in buffer {
      switch effect {
      case .send(let message):
        send(message, from: NodeID(index: Int(d)), to: serverNode, session: devices[Int(d)].session)
      case .timer(let kind, let after, let generation):
        var after = after
        if kind == .timeout, pendingTransfer > .zero {
          // The request just sent carries assets over a slow link: it times out only after them.
          after = after + pendingTransfer
          pendingTransfer = .zero
        }
        loop.schedule(.timer(device: d, kind: kind, generation: generation), after: after)
      case .fact(let fact):
        record(fact, device: d)
      case .shown(let key, let visible):
        if config.recordObservations { facts.observations.append(.visibility(device: d, key: key, visible: visible, at: now)) }
        let withTheAccount = !visible && accountChangedAt[Int(d)] == now
        if let deletes = ledgers[Int(d)].shown(key, visible: visible, withTheAccount: withTheAccount) {
          record(.reappeared(key, afterDeletes: deletes), device: d)
        }
      case .took(let copy):
        if config.recordObservations { facts.observations.append(.received(device: d, copy: copy, at: now)) }
        if config.trackCausality { ledgerTook(copy, device: d) }
      case .ruleIntent(let rule):
        logRule(rule, device: d)
      case .appFile(let name, let own, let staged):
        if config.recordObservations { facts.observations.append(.appFile(device: d, name: name, own: own, staged: staged, at: now)) }
      }
    }
  }

  mutating func record(_ fact: DeviceFact, device d: Int32) {
    facts.events.append(WorldFacts.Event(time: now, device: d, fact: fact, intentsBefore: Int32(log.intents.count)))
    if config.recordObservations {
      switch fact {
      case .outboxLost(let keys), .batchAbandoned(let keys, _): facts.observations.append(.droppedUnsent(device: d, keys: keys, at: now))
      case .rejected(let key, _): facts.observations.append(.droppedUnsent(device: d, keys: [key], at: now))
      case .gaveUp(let keys, _, _), .stalled(let keys, _), .wipedOnAccountChange(let keys), .setAside(let keys, _), .appDropped(let keys, _):
        facts.observations.append(.droppedUnsent(device: d, keys: keys, at: now))
      case .accessEnded(let removed, _) where !removed.isEmpty:
        facts.observations.append(.withdrawn(device: d, keys: removed, at: now))
      case .permissionRefused(let keys, let reverted):
        facts.observations.append(reverted ? .withdrawn(device: d, keys: keys, at: now) : .droppedUnsent(device: d, keys: keys, at: now))
      default: break
      }
    }
    trace.record(WorldTrace.fact, at: now, node: d, _factCode(fact), _factRecord(fact), _factCount(fact))
    note(.fact(d, fact))
  }

  mutating func send(_ message: Message, from: NodeID, to: NodeID, session: UInt32) {
    messagesSent += 1
    recordsSent += message.recordCount
    var t = network.send(from: from, to: to, at: now, using: &wires[from.index])
    if !config.bandwidth.isEmpty { addTransferTime(&t, message, from: from, to: to) }
    trace.record(WorldTrace.send, at: now, node: from.rawValue, message.code, Int64(to.rawValue), Int64(message.recordCount))
    trace.fold { message.fold(into: &$0) }
    if config.keepsEvents {
      note(.sent(message: messagesSent, from: node(from), to: node(to), message))
      if t.arrival == nil { note(.arrived(message: messagesSent, at: node(to), .droppedAtSend(t.dropped ?? .lost), duplicate: false)) }
    }
    guard let arrival = t.arrival else { return }
    let entry = InFlight(transmission: t, message: message, session: session, remaining: t.duplicateArrival == nil ? 1 : 2, seq: messagesSent)
    let slot: Int32
    if let free = freeSlots.popLast() {
      slot = free
      inFlight[Int(slot)] = entry
    } else {
      slot = Int32(inFlight.count)
      inFlight.append(entry)
    }
    loop.schedule(.deliver(slot: slot, duplicate: false), at: arrival)
    if let at = t.duplicateArrival { loop.schedule(.deliver(slot: slot, duplicate: true), at: at) }
  }

  func _factCode(_ f: DeviceFact) -> Int64 {
    switch f {
    case .outboxLost: 1
    case .batchAbandoned: 2
    case .rejected: 3
    case .reappeared: 4
    case .fetchDropped: 5
    case .gaveUp: 6
    case .stalled: 7
    case .zoneGone: 8
    case .wipedOnAccountChange: 9
    case .setAside: 10
    case .orphanDropped: 11
    case .erasedUnknownFields: 12
    case .droppedUnknownFields: 13
    case .appDropped: 14
    case .permissionRefused: 15
    case .accessEnded: 16
    }
  }

  func _factRecord(_ f: DeviceFact) -> Int64 {
    switch f {
    case .rejected(let k, _), .reappeared(let k, _), .orphanDropped(let k, _), .erasedUnknownFields(let k, _, _), .droppedUnknownFields(let k, _, _):
      Int64(k)
    default: -1
    }
  }

  func _factCount(_ f: DeviceFact) -> Int64 {
    switch f {
    case .outboxLost(let ks): Int64(ks.count)
    case .batchAbandoned(let ks, _): Int64(ks.count)
    case .fetchDropped(let n, _): Int64(n)
    case .gaveUp(let ks, _, _), .stalled(let ks, _), .wipedOnAccountChange(let ks), .setAside(let ks, _), .appDropped(let ks, _),
      .permissionRefused(let ks, _):
      Int64(ks.count)
    case .accessEnded(let removed, let kept): Int64(removed.count) << 32 | Int64(kept.count)
    case .zoneGone(_, let wiped, let reuploaded): Int64(wiped.count) << 32 | Int64(reuploaded.count)
    default: 1
    }
  }
}

extension SyncWorld {
  /// A device's link carries a message's asset bytes at its bandwidth: the delivery waits for them
  /// (a kill, or the device going offline, meanwhile cuts the request as it cuts any in flight).
  mutating func addTransferTime(_ t: inout Transmission, _ message: Message, from: NodeID, to: NodeID) {
    let device = from == serverNode ? to : from
    if from != serverNode { pendingTransfer = .zero }
    let bps = device.index < config.bandwidth.count ? config.bandwidth[device.index] : 0
    guard bps > 0 else { return }
    let bytes = assetBytes(of: message, device: Int(device.index))
    guard bytes > 0 else { return }
    // (bytes × 8) / bps seconds, in nanoseconds without overflow: bps is at most 1 Gbps.
    let bits = bytes * 8
    let transfer = SimDuration(nanoseconds: bits / bps * 1_000_000_000 + bits % bps * 1_000_000_000 / bps)
    if let a = t.arrival { t.arrival = a + transfer }
    if let a = t.duplicateArrival { t.duplicateArrival = a + transfer }
    if from == serverNode {
      // A reply downloading assets: the device's request times out only after them.
      var effects: [DeviceEffect] = []
      if !drivers.isEmpty, let box = drivers[device.index] {
        box.driver.downloading(for: transfer, view: devices[device.index], effects: &effects)
      } else {
        devices[device.index].extendTimeout(by: transfer, effects: &effects)
      }
      for case .timer(let kind, let after, let generation) in effects {
        loop.schedule(.timer(device: Int32(device.index), kind: kind, generation: generation), after: after)
      }
    } else {
      pendingTransfer = transfer
    }
  }

  /// The asset bytes a message carries: a push's uploads (the asset fields it changed that carry
  /// data and that the server does not already hold), a fetch's replies (the assets of the records
  /// it returns). Answers to saves carry none.
  func assetBytes(of message: Message, device d: Int) -> Int64 {
    let rules = context.rules
    guard rules.hasAssets else { return 0 }
    var n: Int64 = 0
    func add(_ r: RecordState, only changed: FieldMask?, server: RecordState?) {
      guard !r.isDeleted else { return }
      for f in rules.assetFields[Int(r.type)] {
        if let changed, !changed.contains(.field(Int(f))) { continue }
        guard case .content(let c) = r.fields[Int(f)].value, c.isAsset, c.hasData else { continue }
        if let server, !server.isDeleted, Int(f) < server.fields.count, server.fields[Int(f)].value == .content(c) { continue }
        n += c.size
      }
    }
    switch message {
    case .push(_, let writes, _):
      let account = Int(devices[d].account ?? 0)
      for w in writes where !w.isDelete {
        add(w.record, only: w.changed, server: account < servers.count ? servers[account].records[w.record.key] : nil)
      }
    case .fetchReply(_, .changes(let records, _, _)), .fetchReply(_, .shared(let records, _, _, _, _, _)):
      for r in records { add(r, only: nil, server: nil) }
    default: break
    }
    return n
  }
}
