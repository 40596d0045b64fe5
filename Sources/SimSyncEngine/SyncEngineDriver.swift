import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// Runs a user's app and its `SyncEngine` on one simulated device (``AppDriver``): it makes the
/// app's changes, schedules sends and fetches as `CKSyncEngine` does on its own, turns batches
/// into push requests and replies into events, and after every step tells the world what the
/// app shows, with each value's provenance found from the value itself (workloads for user
/// apps write values unique per intent).
package final class SyncEngineDriver<App: SimApp>: AppDriver {
  let index: Int
  let name: String
  let schema: Schema
  /// Record names by key, and keys by name.
  let names: [String]
  var keys: [String: RecordKey] = [:]
  let disk = SimDisk()
  var app: App?
  var online = true
  var nextRequest: UInt64 = 1
  enum InFlight {
    case none
    /// A push: each change sent, with how many times it had been added then.
    case push(UInt64, [(change: SyncEngine.PendingRecordZoneChange, additions: Int)])
    case fetch(UInt64)
  }
  var inFlight = InFlight.none
  /// Timer generations: a timer set before a kill, or superseded, is ignored when it fires.
  var sendGeneration: UInt32 = 0
  var retryGeneration: UInt32 = 0
  var timeoutGeneration: UInt32 = 0
  /// Records a push sends at most, halved after `limitExceeded` (as `CKSyncEngine` splits a
  /// batch CloudKit refuses as too large).
  var batchLimit = 400
  /// Until when the engine waits before sending or fetching again (a retry-after).
  var holdUntil: VirtualTime = .zero
  /// Pushes in a row that came back with a failure: the engine backs off (1 s, doubling, at
  /// most a minute) before sending again, so that an app that keeps resending what the server
  /// refuses does not spin.
  var failedPushes = 0
  /// After a push came back with failures, fetch before sending again (a fetched deletion or
  /// version may settle what failed).
  var fetchFirst = false
  /// Which intent wrote what, shared by every device's driver in the run.
  let provenance: ProvenanceRegistry
  var written: [RecordKey: [(field: Int32, value: Value, intent: IntentID)]] {
    get { provenance.written }
    set { provenance.written = newValue }
  }
  var creators: [RecordKey: IntentID] {
    get { provenance.creators }
    set { provenance.creators = newValue }
  }
  var deleters: [RecordKey: IntentID] {
    get { provenance.deleters }
    set { provenance.deleters = newValue }
  }
  /// The latest delete this device made of each record: what a delete it sends carries.
  var ownDeletes: [RecordKey: IntentID] = [:]
  /// Why the delegate could not be run, if it could not: the device stops, and the report
  /// fails with it.
  package private(set) var failure: String?
  /// Faults this device ignored because they are not simulated for an app yet, once per kind.
  package private(set) var notSimulated: [String] = []
  var notSimulatedKinds: Set<String> = []
  /// The time of the input or intent being handled (for the failure's message).
  var now: VirtualTime = .zero

  /// The scenario's account names (`icloud`, or those of its `account` lines), by number: the
  /// users an `accountChange` event names.
  let accountNames: [String]
  /// Per account, the zone epoch this device last knew there (restored when it signs in again).
  var zoneEpochs: [Int32: Int32] = [:]
  /// Per account, the records whose changes were pending when the device signed out of it and
  /// that the app no longer had pending after (set aside, or wiped).
  var setAside: [Int32: [RecordKey]] = [:]

  package init(
    index: Int, name: String, schema: Schema, recordNames: [String], accountNames: [String] = ["icloud"], provenance: ProvenanceRegistry
  ) {
    self.accountNames = accountNames
    self.provenance = provenance
    self.index = index
    self.name = name
    self.schema = schema
    names = recordNames
    for (k, n) in recordNames.enumerated() { keys[n] = RecordKey(k) }
  }

  var zoneID: SyncRecordZoneID { SyncRecordZoneID(zoneName: "Records") }
  func recordID(_ key: RecordKey) -> SyncRecordID { SyncRecordID(recordName: names[Int(key)], zoneID: zoneID) }

  /// The device clock the app reads (`SimDevice.now`), set before every call into the app.
  let clock = SimDeviceClock()
  /// Launches so far: each gets its own generator.
  var launches = 0
  /// What the simulator is asking of the app in this step, for the behaviour log.
  var stepInput = ""
  /// When the step is made (true time).
  var stepTime = VirtualTime.zero

  /// The app, launched (again, after a kill) from its disk.
  func launched() -> App {
    if let app { return app }
    launches += 1
    let random = SimDeviceRandom(seed: provenance.seed, device: name, launch: launches)
    let made = App(device: SimDevice(name: name, index: index, disk: disk, clock: clock, random: random))
    app = made
    return made
  }

  // MARK: AppDriver

  package func perform(_ intent: UserIntent, id: IntentID, view: inout DeviceState, env: DeviceEnvironment, effects: inout [DeviceEffect]) -> Intent {
    now = env.now
    clock.deviceTime = view.clock.read(at: env.now)
    if provenance.behaviour != nil { (stepInput, stepTime) = ("intent i\(id)", env.now) }
    let app = launched()
    let key = intent.key
    var kind: IntentKind
    var appIntent: AppIntent
    switch intent {
    case .create(let type, _, let values):
      kind = .create(type: type, values: values)
      appIntent = .create(recordType: schema.types[Int(type)].name, recordID: recordID(key), values: fieldValues(type, values))
    case .set(_, let values):
      let type = view.store.type(of: key) ?? 0
      kind = .set(values)
      appIntent = .set(recordID: recordID(key), values: fieldValues(type, values))
    case .delete:
      kind = .delete
      appIntent = .delete(recordID: recordID(key))
    case .append(_, let field, let text):
      kind = .append(field: field, text: text)
      let type = Int(view.store.type(of: key) ?? 0)
      guard Int(field) < schema.types[type].fields.count else {
        return made(id, key, kind, view, env, ignored: "the app does not show \(names[Int(key)])")
      }
      appIntent = .append(recordID: recordID(key), field: schema.types[type].fields[Int(field)].name, text: text)
    case .replace(_, let field, let old, let new):
      kind = .replace(field: field, old: old, new: new, removed: [])
      return made(id, key, kind, view, env, ignored: "text replacements are not yet simulated for a user's app (appends are)")
    }
    guard app.perform(appIntent) else {
      update(&view, effects: &effects)
      return made(id, key, kind, view, env, ignored: "the app does not show \(names[Int(key)])")
    }
    // The incarnation the intent was made on: a create starts its own; any other intent is on
    // the record the app shows (the view is updated below).
    if case .create = intent {
      provenance.incarnations[id] = id
    } else {
      provenance.incarnations[id] = view.visibleRecord(key)?.creator ?? creators[key]
    }
    switch intent {
    case .create(_, _, let values):
      // (A second create of a record is a re-create, after a delete: a new incarnation.)
      if creators[key] != nil { provenance.recreated.insert(key) }
      creators[key] = id
      provenance.creatorDevices[key] = Int32(index)
      provenance.incarnationDevices[id] = Int32(index)
      wrote(values, key, id)
    case .set(_, let values):
      wrote(values, key, id)
    case .delete:
      deleters[key] = id
      ownDeletes[key] = id
    case .append(_, let field, let text):
      provenance.wrote(text, to: field, of: key, by: id)
    case .replace:
      break
    }
    update(&view, effects: &effects)
    scheduleSend(&view, effects: &effects)
    return made(id, key, kind, view, env, ignored: nil)
  }

  /// Notes which intent wrote each value (a text's value as a piece of text it wrote).
  func wrote(_ values: [FieldWrite], _ key: RecordKey, _ id: IntentID) {
    for w in values {
      if case .text(let t) = w.value {
        provenance.wrote(t.string, to: w.field, of: key, by: id)
      } else {
        written[key, default: []].append((w.field, w.value, id))
      }
    }
  }

  func made(_ id: IntentID, _ key: RecordKey, _ kind: IntentKind, _ view: DeviceState, _ env: DeviceEnvironment, ignored: String?) -> Intent {
    Intent(
      id: id, device: Int32(index), trueTime: env.now, deviceTime: view.clock.read(at: env.now), record: key, kind: kind, ordinal: 0,
      context: CausalContext(), ignored: ignored)
  }

  package func handle(_ input: DeviceInput, view: inout DeviceState, env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    guard failure == nil else { return }
    now = env.now
    clock.deviceTime = view.clock.read(at: env.now)
    if provenance.behaviour != nil { (stepInput, stepTime) = (Self.describe(input), env.now) }
    switch input {
    case .kill:
      app = nil
      inFlight = .none
      sendGeneration &+= 1
      retryGeneration &+= 1
      timeoutGeneration &+= 1
      holdUntil = .zero
      view.driverNewSession()
    case .connectivity(let up):
      online = up
      view.driverSetOnline(up)
      if !up {
        inFlight = .none
        timeoutGeneration &+= 1
        view.driverNewSession()
      } else {
        sync(&view, env: env, effects: &effects)
      }
    case .syncNow:
      sync(&view, env: env, effects: &effects)
    case .timer(.autosync, let generation):
      if generation == sendGeneration { sync(&view, env: env, effects: &effects) }
    case .timer(.retry, let generation):
      if generation == retryGeneration { sync(&view, env: env, effects: &effects) }
    case .timer(.timeout, let generation):
      // No answer in time (a lost request or reply): what was sent stays pending, and the
      // engine tries again, as CKSyncEngine does after a network failure.
      guard generation == timeoutGeneration, !isIdle else { break }
      inFlight = .none
      view.driverNewSession()
      retry(after: .seconds(5), env: env, effects: &effects)
    case .timer:
      break
    case .message(.notify):
      if isIdle, env.now >= holdUntil { fetch(&view, effects: &effects) }
    case .message(.pushReply(let id, let results)):
      guard case .push(let sent, let changes) = inFlight, sent == id else { return }
      inFlight = .none
      timeoutGeneration &+= 1
      pushed(changes, results, &view, env: env, effects: &effects)
    case .message(.fetchReply(let id, let reply)):
      guard case .fetch(let sent) = inFlight, sent == id else { return }
      inFlight = .none
      timeoutGeneration &+= 1
      fetched(reply, &view, env: env, effects: &effects)
    case .background:
      notSimulated("a background budget")
    case .clockJump:
      notSimulated("a clock jump")
    case .deletedZone(let epoch):
      deletedZone(epoch: epoch, &view, effects: &effects)
    case .accountChanged(let account):
      changeAccount(to: account, &view, env: env, effects: &effects)
    case .upgraded:
      notSimulated("an app upgrade")
    case .message:
      break
    }
    update(&view, effects: &effects)
  }

  // MARK: Scheduling

  var isIdle: Bool {
    if case .none = inFlight { true } else { false }
  }

  /// A change was made: send it after a short pause (the next change in that second goes in the
  /// same batch), as CKSyncEngine schedules a send when pending changes are added.
  func scheduleSend(_ view: inout DeviceState, effects: inout [DeviceEffect]) {
    sendGeneration &+= 1
    effects.append(.timer(.autosync, after: .seconds(1), generation: sendGeneration))
  }

  /// Try again after `delay` (a retry-after, or the engine's back-off).
  func retry(after delay: SimDuration, env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    retryGeneration &+= 1
    holdUntil = max(holdUntil, env.now + delay)
    effects.append(.timer(.retry, after: delay, generation: retryGeneration))
  }

  /// Sends what is pending, or else fetches — unless offline, signed out, busy, or waiting out a
  /// retry-after.
  func sync(_ view: inout DeviceState, env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    guard online, view.account != nil, isIdle else { return }
    guard env.now >= holdUntil else {
      effects.append(.timer(.retry, after: holdUntil - env.now, generation: retryGeneration))
      return
    }
    let engine = launched().syncEngine
    if !fetchFirst && !engine.state.pendingRecordZoneChanges.isEmpty { push(&view, effects: &effects) } else { fetch(&view, effects: &effects) }
  }

  /// The request just sent gets no answer within the device's request timeout: give up on it.
  func awaitAnswer(_ view: DeviceState, effects: inout [DeviceEffect]) {
    timeoutGeneration &+= 1
    effects.append(.timer(.timeout, after: view.config.requestTimeout, generation: timeoutGeneration))
  }

  func deliver(_ event: SyncEngine.Event) {
    do { try launched().syncEngine.deliver(event) } catch { fail(error.description) }
  }

  /// Tells the app the engine's state changed (`stateUpdate`), with the engine it has now.
  func deliverState() { deliver(.stateUpdate(.init(stateSerialization: launched().syncEngine.state.serialization))) }

  /// The records with a pending change in the app's engine.
  func pendingKeys(_ app: App) -> [RecordKey] { app.syncEngine.state.pendingRecordZoneChanges.compactMap { keys[$0.recordID.recordName] } }

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

  func push(_ view: inout DeviceState, effects: inout [DeviceEffect]) {
    let engine = launched().syncEngine
    let context = SyncEngine.SendChangesContext(reason: .scheduled)
    deliver(.willSendChanges(context))
    let batch: SyncEngine.RecordZoneChangeBatch?
    do { batch = try engine.nextBatch(context) } catch {
      fail(error.description)
      return
    }
    guard let batch else {
      deliver(.didSendChanges(context))
      fetch(&view, effects: &effects)
      return
    }
    for id in batch.skipped { engine.state.remove(pendingRecordZoneChanges: [.saveRecord(id)]) }
    var writes: [RecordWrite] = []
    var changes: [(change: SyncEngine.PendingRecordZoneChange, additions: Int)] = []
    for record in batch.recordsToSave where writes.count < batchLimit {
      guard let key = keys[record.recordID.recordName], let type = schema.typeIndex(named: record.recordType) else { continue }
      let state = recordState(key, type: Int32(type), values: record.fields)
      var changed = FieldMask()
      for name in record.changedKeys() { if let f = schema.types[type].fields.firstIndex(where: { $0.name == name }) { changed.insert(.field(f)) } }
      if record.recordChangeTag == nil { changed = .all }
      writes.append(RecordWrite(record: state, changed: changed, isDelete: false, baseTag: Int64(record.recordChangeTag ?? "") ?? 0))
      let names = schema.types[type].fields.map(\.name)
      let extras = record.fields.filter { !names.contains($0.key) }
      if !extras.isEmpty || provenance.extras[key]?[state.fields.map(\.value)] != nil {
        provenance.extras[key, default: [:]][state.fields.map(\.value)] = extras
      }
      let change = SyncEngine.PendingRecordZoneChange.saveRecord(record.recordID)
      changes.append((change, engine.state.additions[change] ?? 0))
    }
    for id in batch.recordIDsToDelete where writes.count < batchLimit {
      guard let key = keys[id.recordName] else { continue }
      let type = view.store.type(of: key) ?? 0
      var state = recordState(key, type: type, values: [:])
      state.deletedBy = ownDeletes[key] ?? deleters[key] ?? 0
      if provenance.recreated.contains(key), let creator = provenance.incarnations[state.deletedBy] {
        // The incarnation the delete was made on.
        state.creator = creator
        state.creatorDevice = provenance.incarnationDevices[creator] ?? state.creatorDevice
      }
      writes.append(RecordWrite(record: state, changed: [], isDelete: true, baseTag: 0))
      let change = SyncEngine.PendingRecordZoneChange.deleteRecord(id)
      changes.append((change, engine.state.additions[change] ?? 0))
    }
    guard !writes.isEmpty else {
      deliver(.didSendChanges(context))
      fetch(&view, effects: &effects)
      return
    }
    let id = nextRequest
    nextRequest += 1
    inFlight = .push(id, changes)
    effects.append(.send(.push(requestID: id, writes: writes, zone: view.zoneEpoch)))
    awaitAnswer(view, effects: &effects)
  }

  func pushed(
    _ changes: [(change: SyncEngine.PendingRecordZoneChange, additions: Int)], _ results: [WriteResult], _ view: inout DeviceState,
    env: DeviceEnvironment, effects: inout [DeviceEffect]
  ) {
    let engine = launched().syncEngine
    var saved: [SyncRecord] = []
    var failedSaves: [SyncEngine.Event.SentRecordZoneChanges.FailedRecordSave] = []
    var deleted: [SyncRecordID] = []
    var failedDeletes: [(recordID: SyncRecordID, error: SyncError)] = []
    var retryAfter: SimDuration?
    var split = false
    for (sent, result) in zip(changes, results) {
      let id = sent.change.recordID
      switch result {
      case .saved(let server):
        effects.append(.took(server))
        saved.append(syncRecord(server))
        engine.state.acknowledge(sent.change, additionsThen: sent.additions)
      case .deleted:
        deleted.append(id)
        engine.state.acknowledge(sent.change, additionsThen: sent.additions)
      case .conflict(let server),
        .refusedDeleted(let server) where !server.isDeleted:
        // (Refused as deleted with a live record: the record was deleted and created again, and
        // this save was of the deleted incarnation — to the app, a changed server record, as
        // CloudKit answers a change tag it does not have.)
        effects.append(.took(server))
        let failure = SyncError(.serverRecordChanged, serverRecord: syncRecord(server))
        engine.state.remove(pendingRecordZoneChanges: [sent.change])
        failedSaves.append(.init(record: SyncRecord(recordType: server.typeName(in: schema), recordID: id), error: failure))
      case .refusedDeleted(let tombstone):
        effects.append(.took(tombstone))
        engine.state.remove(pendingRecordZoneChanges: [sent.change])
        failedSaves.append(.init(record: SyncRecord(recordType: tombstone.typeName(in: schema), recordID: id), error: SyncError(.unknownItem)))
      case .rejected:
        engine.state.remove(pendingRecordZoneChanges: [sent.change])
        failedSaves.append(.init(record: SyncRecord(recordType: "", recordID: id), error: SyncError(.serverRejectedRequest)))
      case .failed(.limitExceeded, _):
        // The engine splits the batch and sends again; the app is not told.
        split = true
        continue
      case .failed(let error, let after):
        let code = SyncError.Code(rawValue: "\(error)") ?? .serverRejectedRequest
        let failure = SyncError(code, retryAfterSeconds: after.map { Double($0.nanoseconds) / 1e9 })
        if error.isTransient {
          // The engine keeps the change pending and sends it again, after the retry-after.
          retryAfter = max(retryAfter ?? .seconds(5), after ?? .zero)
        } else {
          engine.state.remove(pendingRecordZoneChanges: [sent.change])
        }
        if case .deleteRecord = sent.change {
          failedDeletes.append((id, failure))
        } else {
          failedSaves.append(.init(record: SyncRecord(recordType: "", recordID: id), error: failure))
        }
      }
    }
    deliver(
      .sentRecordZoneChanges(
        .init(savedRecords: saved, failedRecordSaves: failedSaves, deletedRecordIDs: deleted, failedRecordDeletes: failedDeletes)))
    deliver(.didSendChanges(.init(reason: .scheduled)))
    deliverState()
    if split { batchLimit = max(1, changes.count / 2) }
    let allSaved = results.allSatisfy { if case .saved = $0 { true } else if case .deleted = $0 { true } else { false } }
    failedPushes = allSaved ? 0 : failedPushes + 1
    if !allSaved { fetchFirst = true }
    if let retryAfter {
      retry(after: retryAfter, env: env, effects: &effects)
    } else if failedPushes > 0 && !split {
      retry(after: .seconds(Int64(1) << Int64(min(failedPushes - 1, 6))), env: env, effects: &effects)
    } else {
      sync(&view, env: env, effects: &effects)
    }
  }

  func fetch(_ view: inout DeviceState, effects: inout [DeviceEffect]) {
    guard online, view.account != nil, case .none = inFlight else { return }
    fetchFirst = false
    let engine = launched().syncEngine
    deliver(.willFetchChanges)
    let id = nextRequest
    nextRequest += 1
    inFlight = .fetch(id)
    effects.append(.send(.fetch(requestID: id, token: engine.state.changeToken, zone: view.zoneEpoch)))
    awaitAnswer(view, effects: &effects)
  }

  func fetched(_ reply: FetchReply, _ view: inout DeviceState, env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    let engine = launched().syncEngine
    switch reply {
    case .changes(let records, let token, let more):
      var modifications: [SyncEngine.Event.FetchedRecordZoneChanges.Modification] = []
      var deletions: [SyncEngine.Event.FetchedRecordZoneChanges.Deletion] = []
      for r in records {
        effects.append(.took(r))
        if r.isDeleted {
          deletions.append(.init(recordID: recordID(r.key), recordType: r.typeName(in: schema)))
        } else {
          modifications.append(.init(record: syncRecord(r)))
        }
      }
      if !records.isEmpty { deliver(.fetchedRecordZoneChanges(.init(modifications: modifications, deletions: deletions))) }
      engine.state.changeToken = token
      deliverState()
      if more {
        fetch(&view, effects: &effects)
      } else {
        deliver(.didFetchChanges)
        if !engine.state.pendingRecordZoneChanges.isEmpty { push(&view, effects: &effects) }
      }
    case .tokenExpired:
      engine.state.changeToken = nil
      fetch(&view, effects: &effects)
    case .failed(_, let after):
      retry(after: max(.seconds(5), after ?? .zero), env: env, effects: &effects)
    case .zoneDeleted(let reason, let epoch):
      // The zone went since this device last fetched: the engine starts over in the new zone
      // and tells the app, which decides what its rows become.
      let before = shownKeys()
      engine.state.changeToken = nil
      view.driverSetZoneEpoch(epoch)
      let why: SyncEngine.Event.FetchedDatabaseChanges.Reason =
        switch reason {
        case .deleted: .deleted
        case .purged: .purged
        case .encryptedDataReset: .encryptedDataReset
        }
      deliver(.fetchedDatabaseChanges(.init(deletions: [(zoneID, why)])))
      deliverState()
      zoneGone(reason, shownBefore: before, effects: &effects)
      sync(&view, env: env, effects: &effects)
    }
  }

  // MARK: Zones and accounts

  /// The records the app shows now (none before it is launched).
  func shownKeys() -> [RecordKey] { app?.shownRecords().compactMap { keys[$0.recordID.recordName] } ?? [] }

  /// The keys of the records with a pending save.
  func pendingSaves() -> Set<RecordKey> {
    var saves: Set<RecordKey> = []
    for case .saveRecord(let id) in launched().syncEngine.state.pendingRecordZoneChanges { if let key = keys[id.recordName] { saves.insert(key) } }
    return saves
  }

  /// What the app made of a zone's deletion, for the report's explanations: the rows it
  /// dropped, and those it kept and sends again.
  func zoneGone(_ reason: ZoneDeletionReason, shownBefore before: [RecordKey], effects: inout [DeviceEffect]) {
    let after = Set(shownKeys())
    let saves = pendingSaves()
    let wiped = before.filter { !after.contains($0) }
    let reuploaded = before.filter { after.contains($0) && saves.contains($0) }
    effects.append(.fact(.zoneGone(reason, wiped: wiped, reuploaded: reuploaded)))
  }

  /// Whatever was under way stops: a request in flight is cut off, timers are void.
  func cutOff(_ view: inout DeviceState) {
    inFlight = .none
    sendGeneration &+= 1
    retryGeneration &+= 1
    timeoutGeneration &+= 1
    holdUntil = .zero
    failedPushes = 0
    fetchFirst = false
    batchLimit = 400
    view.driverNewSession()
  }

  /// The user deleted the app's data on this device (`delete-zone`): the server's zone is gone
  /// already; the app deletes its rows and pending changes, and the engine starts over in the
  /// new zone.
  func deletedZone(epoch: Int32, _ view: inout DeviceState, effects: inout [DeviceEffect]) {
    let app = launched()
    let before = shownKeys()
    cutOff(&view)
    _ = app.perform(.deleteZone(zoneID: zoneID))
    let engine = launched().syncEngine
    engine.state.changeToken = nil
    view.driverSetZoneEpoch(epoch)
    deliverState()
    zoneGone(.deleted, shownBefore: before, effects: &effects)
  }

  /// The device signed out of its iCloud account, into one, or switched: requests stop, the app
  /// hears of it (`accountChange`) and decides what becomes of its rows, and the engine syncs
  /// with the new account's database.
  func changeAccount(to new: Int32?, _ view: inout DeviceState, env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    let old = view.account
    guard old != new else { return }
    let pendingBefore = app.map(pendingKeys) ?? []
    cutOff(&view)
    if let old { zoneEpochs[old] = view.zoneEpoch }
    view.driverSetAccount(new)
    view.driverSetZoneEpoch(new.flatMap { zoneEpochs[$0] } ?? 0)
    func user(_ account: Int32) -> String { Int(account) < accountNames.count ? accountNames[Int(account)] : "account \(account)" }
    let change: SyncEngine.Event.AccountChange.ChangeType =
      switch (old, new) {
      case (let old?, let new?): .switchAccounts(previousUser: user(old), currentUser: user(new))
      case (let old?, nil): .signOut(previousUser: user(old))
      default: .signIn(currentUser: user(new ?? 0))
      }
    deliver(.accountChange(.init(changeType: change)))
    let pendingAfter = Set(pendingKeys(launched()))
    if let old {
      let aside = pendingBefore.filter { !pendingAfter.contains($0) }
      setAside[old] = aside
      view.driverSetAside(aside, account: old)
    }
    if let new, let aside = setAside.removeValue(forKey: new) {
      // Back in an account: what was set aside with it should be pending again.
      view.driverSetAside([], account: new)
      let wiped = aside.filter { !pendingAfter.contains($0) }
      if !wiped.isEmpty { effects.append(.fact(.wipedOnAccountChange(wiped))) }
    }
    sync(&view, env: env, effects: &effects)
  }

  // MARK: Views and provenance

  /// What the world sees of the device: the app's records with their provenance, the records
  /// with unsent changes, the token, whether a request is out.
  func update(_ view: inout DeviceState, effects: inout [DeviceEffect]) {
    guard let app else { return }  // killed: the store on disk is what it was
    var shown: [RecordState] = []
    for record in app.shownRecords() {
      guard let key = keys[record.recordID.recordName], let type = schema.typeIndex(named: record.recordType) else { continue }
      shown.append(recordState(key, type: Int32(type), values: record.fields))
    }
    shown.sort { $0.key < $1.key }
    let pending = pendingKeys(app)
    let busy: Bool
    if case .none = inFlight { busy = false } else { busy = true }
    view.driverUpdate(shown: shown, pending: pending, token: app.syncEngine.state.changeToken, busy: busy, effects: &effects)
    if let log = provenance.behaviour { log.steps.append(step(app, shown: shown, at: stepTime, effects: effects)) }
  }

  /// The behaviour log's line for the step just made: what the app shows, has pending and sent,
  /// and what its disk holds (as a digest of its files).
  func step(_ app: App, shown: [RecordState], at now: VirtualTime, effects: [DeviceEffect]) -> AppBehaviourLog.Step {
    var text = "shows"
    for r in shown { text += " \(names[Int(r.key)]){" + r.fields.map { "\($0.value)" }.joined(separator: ",") + "}" }
    let pending = app.syncEngine.state.pendingRecordZoneChanges.map { "\($0)" }.sorted()
    text += "; pending " + pending.joined(separator: " ")
    for case .send(.push(_, let writes, _)) in effects {
      text +=
        "; sends "
        + writes.map { w in
          "\(names[Int(w.record.key)])" + (w.isDelete ? "(delete)" : "{" + w.record.fields.map { "\($0.value)" }.joined(separator: ",") + "}")
        }.joined(separator: " ")
    }
    var disk = StableHasher()
    for name in self.disk.names {
      disk.combine(name)
      for byte in self.disk[name] ?? Data() { disk.combine(byte: byte) }
    }
    return .init(time: now, device: name, input: stepInput, outcome: text, disk: "\(self.disk.names.count) files #" + String(disk.value, radix: 16))
  }

  /// An input, as the behaviour log names it.
  static func describe(_ input: DeviceInput) -> String {
    switch input {
    case .kill: "kill"
    case .connectivity(let up): up ? "online" : "offline"
    case .syncNow: "sync"
    case .timer(let kind, _): "timer \(kind)"
    case .message(.notify): "push notification"
    case .message(.pushReply): "push reply"
    case .message(.fetchReply): "fetch reply"
    default: "\(input)"
    }
  }

  func recordState(_ key: RecordKey, type: Int32, values: [String: SyncValue]) -> RecordState {
    let spec = schema.types[Int(type)]
    var fields: [FieldValue] = []
    for (f, field) in spec.fields.enumerated() {
      if field.kind == .text, case .string(let shown)? = values[field.name] {
        let (text, writer) = provenance.text(shown, field: Int32(f), of: key)
        fields.append(FieldValue(value: .text(text), writer: writer, stamp: .origin))
        continue
      }
      let value = values[field.name].map(simValue) ?? field.initialValue
      let writer = written[key]?.last { $0.field == Int32(f) && $0.value == value }?.intent ?? 0
      fields.append(FieldValue(value: value, writer: writer, stamp: .origin))
    }
    var creator = creators[key] ?? 0
    var creatorDevice = provenance.creatorDevices[key] ?? Int32(index)
    if !provenance.recreated.isEmpty, provenance.recreated.contains(key),
      let latest = fields.compactMap({ provenance.incarnations[$0.writer] }).max()
    {
      // A record created again after a delete: the copy is of the latest incarnation any of its
      // values was written in.
      creator = latest
      creatorDevice = provenance.incarnationDevices[latest] ?? creatorDevice
    }
    return RecordState(key: key, type: type, creator: creator, creatorDevice: creatorDevice, fields: fields, stamp: .origin)
  }

  func fieldValues(_ type: Int32, _ writes: [FieldWrite]) -> [(field: String, value: SyncValue)] {
    writes.map { (schema.types[Int(type)].fields[Int($0.field)].name, syncValue($0.value)) }
  }

  func syncValue(_ v: Value) -> SyncValue {
    switch v {
    case .null: .strings([])
    case .string(let s): .string(s)
    case .int(let n): .int(n)
    case .bool(let b): .bool(b)
    case .date(let ns): .date(ns)
    case .ref(let k): .reference(SyncRecord.Reference(recordID: recordID(k), action: .none))
    case .text(let t): .string(t.string)
    }
  }

  func simValue(_ v: SyncValue) -> Value {
    switch v {
    case .string(let s): .string(s)
    case .int(let n): .int(n)
    case .double(let d): .int(Int64(d))
    case .bool(let b): .bool(b)
    case .date(let ns): .date(ns)
    case .data(let d): .string(d.base64EncodedString())
    case .reference(let r): keys[r.recordID.recordName].map(Value.ref) ?? .null
    case .strings(let s): s.isEmpty ? .null : .string(s.joined(separator: ","))
    }
  }

  func syncRecord(_ r: RecordState) -> SyncRecord {
    let record = SyncRecord(recordType: r.typeName(in: schema), recordID: recordID(r.key))
    for (f, field) in schema.types[Int(r.type)].fields.enumerated() where r.fields[f].value != .null {
      record.fields[field.name] = syncValue(r.fields[f].value)
    }
    for (key, value) in provenance.extras[r.key]?[r.fields.map(\.value)] ?? [:] { record.fields[key] = value }
    record.system.recordChangeTag = String(r.changeTag)
    return record
  }
}

/// Which intent wrote which value, made which record and deleted it, for every device of a run:
/// a user's app stores values, not their provenance, so the drivers find it from the values
/// (which workloads for user apps make unique per intent).
package final class ProvenanceRegistry: @unchecked Sendable {
  /// Per record, every value an intent wrote to a field.
  var written: [RecordKey: [(field: Int32, value: Value, intent: IntentID)]] = [:]
  /// The intent that created each record.
  var creators: [RecordKey: IntentID] = [:]
  /// The device that created each record: the server keeps it with the record whoever saves it
  /// later (after a fetch from no token, a device hears of the deletions of its own records only).
  var creatorDevices: [RecordKey: Int32] = [:]
  /// The intent that deleted each record (its latest delete).
  var deleters: [RecordKey: IntentID] = [:]
  /// Records created again after a delete (see ``incarnations``).
  var recreated: Set<RecordKey> = []
  /// Per intent of a user's app, the create of the incarnation of its record it was made on
  /// (creates are their own): a record created again after a delete has copies of two
  /// incarnations, told apart by the values they hold.
  var incarnations: [IntentID: IntentID] = [:]
  /// The device of each create (``RecordState/creatorDevice`` of its incarnation).
  var incarnationDevices: [IntentID: Int32] = [:]
  /// The fields an app saved that the schema does not have (its own bookkeeping, such as field
  /// versions), per record and the schema's field values they were saved with: the simulated
  /// server keeps every field an app writes, the oracle judges the schema's. (Keyed by content,
  /// not change tag, so that a save whose answer was lost keeps them too; values are unique per
  /// intent, so the content names the writes it holds.)
  var extras: [RecordKey: [[Value]: [String: SyncValue]]] = [:]
  /// Per record and text field, the pieces of text intents wrote (a create's or set's whole
  /// text, an append's text), each unique in the run.
  var pieces: [RecordKey: [Int32: [(text: [Unicode.Scalar], intent: IntentID)]]] = [:]
  /// Per record and text field, the last text read back and what it was found to be (most steps
  /// show the same text again).
  var readBack: [RecordKey: [Int32: (shown: String, text: TextValue, writer: IntentID)]] = [:]
  /// The run's seed: each device's generator is drawn from it.
  var seed: UInt64 = 0
  /// Where the drivers log what the app did, when the run is checked for determinism.
  var behaviour: AppBehaviourLog?
  package init() {}

  /// Notes that `intent` wrote `text` into a text field.
  func wrote(_ text: String, to field: Int32, of key: RecordKey, by intent: IntentID) {
    guard !text.isEmpty else { return }
    pieces[key, default: [:]][field, default: []].append((Array(text.unicodeScalars), intent))
    readBack[key]?[field] = nil
  }

  /// A text field as an app shows it, with each character's provenance: read left to right, the
  /// longest piece an intent wrote that starts here is that intent's (its characters numbered
  /// from 0, as the intent inserted them); a character no piece explains is nobody's (intent 0,
  /// numbered on so that no two share an id). A piece shown twice is an append applied twice,
  /// which the oracle reports. Also returns the last intent found (the field's writer).
  func text(_ shown: String, field: Int32, of key: RecordKey) -> (TextValue, IntentID) {
    if let last = readBack[key]?[field], last.shown == shown { return (last.text, last.writer) }
    let known = pieces[key]?[field] ?? []
    let scalars = Array(shown.unicodeScalars)
    var text = TextValue()
    var writer: IntentID = 0
    var stray = String.UnicodeScalarView()
    var strayOffset: Int32 = 0
    func flushStray() {
      guard !stray.isEmpty else { return }
      text.append(String(stray), by: 0, firstOffset: strayOffset)
      strayOffset += Int32(stray.count)
      stray = String.UnicodeScalarView()
    }
    var i = 0
    while i < scalars.count {
      var best = -1
      for (p, piece) in known.enumerated() where piece.text.count <= scalars.count - i && (best < 0 || piece.text.count > known[best].text.count) {
        if scalars[i..<i + piece.text.count].elementsEqual(piece.text) { best = p }
      }
      if best < 0 {
        stray.append(scalars[i])
        i += 1
        continue
      }
      flushStray()
      var piece = String.UnicodeScalarView()
      piece.append(contentsOf: known[best].text)
      text.append(String(piece), by: known[best].intent)
      writer = known[best].intent
      i += known[best].text.count
    }
    flushStray()
    readBack[key, default: [:]][field] = (shown, text, writer)
    return (text, writer)
  }
}

extension RecordState {
  func typeName(in schema: Schema) -> String { schema.types[Int(type)].name }
}
