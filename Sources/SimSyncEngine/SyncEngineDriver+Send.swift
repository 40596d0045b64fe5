import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// Sending, in the order of `CKSyncEngine`'s class overview: `willSendChanges`; pending zone
/// saves and deletes, then `sentDatabaseChanges`; batches of record changes from the delegate,
/// each answered with `sentRecordZoneChanges`; `didSendChanges`.
extension SyncEngineDriver {
  func startSend(_ context: SyncEngine.SendChangesContext, _ view: inout DeviceState, env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    let engine = self.engine(operationScope)
    let state = engine.state
    // Nothing to send: a scheduled send does nothing (no events); one the app or the scenario
    // asked for still tells the delegate it ran.
    if context.reason == .scheduled, state.pendingRecordZoneChanges.isEmpty, state.pendingDatabaseChanges.isEmpty,
      !state.hasPendingUntrackedChanges
    {
      if fetchAfterSend { enqueue(.fetch(.init()), .scheduled) }
      return
    }
    operation = .sending(context)
    deliver(.willSendChanges(.init(context: context)))
    sendNext(&view, env: env, effects: &effects)
  }

  /// A scheduled send is followed by a fetch (the engine's own schedule: it fetches after it
  /// sends, as well as when a push notification comes).
  var fetchAfterSend: Bool { automatic }

  /// The next request of the send under way: zone changes first, then the delegate's next batch;
  /// when there is nothing left, the send ends.
  func sendNext(_ view: inout DeviceState, env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    guard failure == nil, case .sending(let context) = operation else { return }
    guard link.online, view.account != nil else { return finishSend(effects: &effects) }
    let engine = self.engine(operationScope)
    // (A shared database's zones are their owners': its engine saves and deletes none.)
    let zoneChanges = operationScope == .shared ? [] : engine.state.pendingDatabaseChanges.filter { context.options.scope.contains($0) }
    if !zoneChanges.isEmpty {
      var changes: [ZoneChange] = []
      var echoes = true
      for change in zoneChanges {
        let zone = change.zoneID
        if !knownZones.contains(zone) { knownZones.append(zone) }
        if case .deleteZone = change {
          changes.append(ZoneChange(zone: provenance.zoneNumber(zone), isDelete: true))
          if !deletedByTheUser.contains(zone) { echoes = false }
        } else {
          changes.append(ZoneChange(zone: provenance.zoneNumber(zone), isDelete: false))
          deletedByTheUser.removeAll { $0 == zone }
        }
      }
      let id = nextRequest
      nextRequest += 1
      inFlight = .zones(id, zoneChanges)
      // The app's delete of a zone the user's "delete all data" deleted already (the world
      // deletes it at the intent) names the zone as it was then: the server has nothing more to
      // delete, even if the zone was made again since.
      let epoch = echoes && changes.contains(where: \.isDelete) ? view.zoneEpoch - 1 : view.zoneEpoch
      effects.append(.send(.zones(requestID: id, changes: changes, zone: epoch)))
      awaitAnswer(view, effects: &effects)
      return
    }
    let batch: SyncEngine.RecordZoneChangeBatch?
    appEntries &+= 1
    do { batch = try engine.nextBatch(context) } catch {
      fail(error.description)
      return
    }
    if let misuse = link.misuse { return fail(misuse) }
    guard let batch, !batch.recordsToSave.isEmpty || !batch.recordIDsToDelete.isEmpty else {
      let pending = engine.state.pendingRecordZoneChanges
      declined[operationScope == .shared ? 1 : 0] = pending.isEmpty ? nil : pending
      return finishSend(effects: &effects)
    }
    // Atomic as the batch says — one built from the pending changes, whose atomicity Apple
    // does not document, as the scenario's `zone atomic` says.
    let atomic = batch.builtFromPendingChanges ? atomicBatches : batch.atomicByZone
    var writes: [RecordWrite] = []
    var changes: [(change: SyncEngine.PendingRecordZoneChange, additions: Int)] = []
    var records: [SyncRecord] = []
    for record in batch.recordsToSave where writes.count < batchLimit {
      if let why = Self.invalidName(record.recordID.recordName) { return fail("\(record.recordType) '\(record.recordID.recordName)' \(why)") }
      guard let key = keys[record.recordID.recordName] else { return fail(unknownName(record.recordID.recordName, type: record.recordType)) }
      guard let type = schema.typeIndex(named: record.recordType) else {
        notSimulated("a record of a type the scenario does not declare (\(record.recordType)), which is not sent")
        continue
      }
      if let parent = record.parent {
        guard parent.action == .none else {
          return fail(
            "\(record.recordType) \(record.recordID.recordName) was sent with a parent reference whose action is deleteSelf: CloudKit throws on a parent reference whose action is not .none (CKRecord.parent)"
          )
        }
      } else if sharingRun, type < parentFields.count, let f = parentFields[type], case .reference? = record.fields[schema.types[type].fields[f].name]
      {
        notSimulated(
          "a \(record.recordType) sent with its parent field (\(schema.types[type].fields[f].name)) set and no CKRecord.parent: CloudKit would leave it out of its parent's hierarchy share; the simulator shares it with its parent"
        )
      }
      if let why = encryptionMismatch(record, type: type) { return fail(why) }
      let values = values(of: record, type: type)
      var state = recordState(key, type: Int32(type), values: values)
      var changed = FieldMask()
      for name in record.changed.sorted() {
        if let f = schema.types[type].fields.firstIndex(where: { $0.name == name }) { changed.insert(.field(f)) }
      }
      if record.parentChanged, type < parentFields.count, let f = parentFields[type], record.fields[schema.types[type].fields[f].name] == nil {
        changed.insert(.field(f))
      }
      if record.recordChangeTag == nil {
        changed = .all
      } else {
        keepServerFields(of: key, in: &state, values: values, changed: changed, tag: record.recordChangeTag)
      }
      var write = RecordWrite(record: state, changed: changed, isDelete: false, baseTag: baseTag(record.recordChangeTag, of: key) ?? 0)
      // With sharing, the server tells a record saved before (sent to its owner's database) from
      // one saved as new (to the sender's) by the copy's change tag, as the built-in engine's
      // copies carry it.
      if sharingRun { write.record.changeTag = write.baseTag }
      write.zone = zoneNumber(of: record.recordID, key: key)
      write.atomic = atomic
      writes.append(write)
      let names = schema.types[type].fields.map(\.name)
      let extras = record.fields.filter { !names.contains($0.key) }
      if !extras.isEmpty || provenance.extras[key]?[state.fields.map(\.value)] != nil {
        provenance.extras[key, default: [:]][state.fields.map(\.value)] = extras
      }
      let encryptedExtras = record.encrypted.filter { extras[$0] != nil }
      if !encryptedExtras.isEmpty || provenance.encryptedExtras[key]?[state.fields.map(\.value)] != nil {
        provenance.encryptedExtras[key, default: [:]][state.fields.map(\.value)] = encryptedExtras
      }
      let change = SyncEngine.PendingRecordZoneChange.saveRecord(record.recordID)
      changes.append((change, engine.state.additions[change] ?? 0))
      records.append(record.copy())
    }
    for id in batch.recordIDsToDelete where writes.count < batchLimit {
      if let why = Self.invalidName(id.recordName) { return fail("a delete of '\(id.recordName)': that name \(why)") }
      guard let key = keys[id.recordName] else { return fail(unknownName(id.recordName, type: nil)) }
      let type = Int(key) < provenance.types.count ? provenance.types[Int(key)] : (view.store.type(of: key) ?? 0)
      var state = recordState(key, type: type, values: [:])
      state.deletedBy = ownDeletes[key] ?? deleters[key] ?? 0
      if provenance.recreated.contains(key), let creator = provenance.incarnations[state.deletedBy] {
        // The incarnation the delete was made on.
        state.creator = creator
        state.creatorDevice = provenance.incarnationDevices[creator] ?? state.creatorDevice
      }
      var write = RecordWrite(record: state, changed: [], isDelete: true, baseTag: 0)
      write.zone = zoneNumber(of: id, key: key)
      write.atomic = atomic
      writes.append(write)
      let change = SyncEngine.PendingRecordZoneChange.deleteRecord(id)
      changes.append((change, engine.state.additions[change] ?? 0))
      records.append(SyncRecord(recordType: schema.types[Int(type)].name, recordID: id))
    }
    guard !writes.isEmpty else { return finishSend(effects: &effects) }
    let id = nextRequest
    nextRequest += 1
    inFlight = .push(id, changes, records: records)
    effects.append(.send(.push(requestID: id, writes: writes, zone: view.zoneEpoch)))
    // (Its uploads read their files while it travels: one changed from now on is modified.)
    if hasAssets { view.driverSentPush(at: env.now) }
    awaitAnswer(view, effects: &effects)
  }

  /// Why CloudKit would not take `name` as a record name (`CKRecord.ID(recordName:)`: "The
  /// string must contain only ASCII characters, must not exceed 255 characters, and must not
  /// start with an underscore. If you specify an empty string for this parameter, the method
  /// throws an exception."); nil when it would.
  static func invalidName(_ name: String) -> String? {
    if name.isEmpty { return "is an empty record name, which CKRecord.ID(recordName:) throws on" }
    if !name.utf8.allSatisfy({ $0 < 0x80 }) { return "is not ASCII, as CloudKit's record names must be (CKRecord.ID)" }
    if name.utf8.count > 255 { return "is \(name.utf8.count) characters long, and CloudKit's record names are at most 255 (CKRecord.ID)" }
    if name.hasPrefix("_") { return "starts with an underscore, which CloudKit's record names must not (CKRecord.ID)" }
    return nil
  }

  /// What the report says of a record the app sent under a name the simulator did not hand it
  /// (it cannot tell which of the scenario's records it is, so nothing is sent).
  func unknownName(_ name: String, type: String?, shown: Bool = false) -> String {
    let what = type.map { "\(shown ? "shows" : "sent") a \($0) named '\(name)'" } ?? "sent a delete of '\(name)'"
    let sample = names.first.map { " (the first is '\($0)')" } ?? ""
    return
      "the app \(what), a record name the simulator never handed it: it names each record as AppSchema's recordNames says\(sample), and the app must keep and send a record under the name it was given in .create. An app that names records its own way (\"Type|UUID\", \"UUID:table\") says so with recordNames: .pattern(\"{type}|{uuid}\") or the like; a record the app makes on its own, with no intent of the scenario behind it, is not simulated yet"
  }

  /// A record saved with a change tag carries only the keys set in it (CloudKit saves a record's
  /// changed keys): a field it does not hold and did not set keeps the server's value — that of
  /// the server's version of that tag, which this device was handed (a save based on another
  /// version is refused as changed, whatever it holds).
  func keepServerFields(of key: RecordKey, in state: inout RecordState, values: [String: SyncValue], changed: FieldMask, tag: String?) {
    guard let copy = serverCopies[key], !copy.isDeleted, copy.type == state.type, baseTag(tag, of: key) == copy.changeTag else { return }
    for (f, field) in schema.types[Int(state.type)].fields.enumerated()
    where f < copy.fields.count && !changed.contains(field: f) && values[field.name] == nil {
      state.fields[f] = copy.fields[f]
    }
  }

  /// The number of the zone a record is sent to, noting it as the record's zone.
  func zoneNumber(of id: SyncRecordID, key: RecordKey) -> Int32 {
    // A record of a shared zone is in its owner's zone of that name.
    let zoneID = id.zoneID.ownerName == SyncRecordZoneID.currentUserName ? id.zoneID : SyncRecordZoneID(zoneName: id.zoneID.zoneName)
    if !knownZones.contains(zoneID) { knownZones.append(zoneID) }
    let n = provenance.zoneNumber(zoneID)
    provenance.zoneOf[key] = n
    return n
  }

  /// The send ends: `didSendChanges`; a scheduled one is followed by a fetch.
  func finishSend(effects: inout [DeviceEffect]) {
    guard case .sending(let context) = operation else { return }
    operation = .idle
    deliver(.didSendChanges(.init(context: context)))
    if context.reason == .scheduled, fetchAfterSend { enqueue(.fetch(.init()), .scheduled) }
  }

  /// What the engine makes of a CloudKit error: the same code, as `CKError.Code` names it.
  func syncCode(_ error: CloudKitError) -> SyncError.Code { SyncError.Code(rawValue: error.rawValue) ?? .serverRejectedRequest }

  func pushed(
    _ changes: [(change: SyncEngine.PendingRecordZoneChange, additions: Int)], _ records: [SyncRecord], _ results: [WriteResult],
    _ view: inout DeviceState, env: DeviceEnvironment, effects: inout [DeviceEffect]
  ) {
    let engine = self.engine(operationScope)
    var saved: [SyncRecord] = []
    var failedSaves: [SyncEngine.Event.SentRecordZoneChanges.FailedRecordSave] = []
    var deleted: [SyncRecordID] = []
    var failedDeletes: [(SyncRecordID, SyncError)] = []
    var retryAfter: SimDuration?
    var split = false
    var anyFailure = false
    var lastError: CloudKitError?
    for ((sent, record), result) in zip(zip(changes, records), results) {
      let id = sent.change.recordID
      let key = keys[id.recordName]
      func failedWith(_ error: SyncError) {
        anyFailure = true
        if let key { stepErrors[key] = error.code.rawValue }
        if error.code == .permissionFailure, let key {
          // What was refused, to tell whether the app took it back.
          if case .deleteRecord = sent.change { stepRefused[key] = .some(nil) } else { stepRefused[key] = record.fields }
        }
        if error.code.isRetriedByTheEngine {
          // The engine keeps the change pending and sends it again, after the retry-after.
          retryAfter = max(retryAfter ?? .seconds(5), error.retryAfterSeconds.map { .nanoseconds(Int64($0 * 1e9)) } ?? .zero)
        } else {
          // Left to the delegate: the change is no longer pending (it adds it again to retry).
          engine.state.remove(pendingRecordZoneChanges: [sent.change])
        }
        if case .deleteRecord = sent.change { failedDeletes.append((id, error)) } else { failedSaves.append(.init(record: record, error: error)) }
      }
      switch result {
      case .saved(let server):
        took(server, assets: .saved(record), effects: &effects)
        saved.append(syncRecord(server, assets: .saved(record)))
        engine.state.acknowledge(sent.change, additionsThen: sent.additions)
        if let key { stepAcknowledged.insert(key) }
      case .deleted:
        deleted.append(id)
        engine.state.acknowledge(sent.change, additionsThen: sent.additions)
        if let key { stepAcknowledged.insert(key) }
      case .conflict(let server),
        .refusedDeleted(let server) where !server.isDeleted:
        // (Refused as deleted with a live record: the record was deleted and created again, and
        // this save was of the deleted incarnation — to the app, a changed server record, as
        // CloudKit answers a change tag it does not have.)
        // (CloudKit does not download the assets of the server record it hands back: each
        // `fileURL` is nil, Apple, `CKAsset.fileURL`.)
        took(server, assets: .withoutData, effects: &effects)
        failedWith(SyncError(.serverRecordChanged, serverRecord: syncRecord(server, assets: .withoutData), clientRecord: record))
      case .refusedDeleted(let tombstone):
        took(tombstone, effects: &effects)
        failedWith(SyncError(.unknownItem))
      case .rejected:
        failedWith(SyncError(.serverRejectedRequest))
      case .failed(.limitExceeded, _) where changes.count > 1 && results.allSatisfy(\.isLimitExceeded):
        // The request is too large: the engine splits the batch and sends again; the app is not
        // told. (A record refused alone — over CloudKit's 1 MB a record, or an asset over 50 MB —
        // no split can help: it is the delegate's, below.)
        split = true
      case .failed(let error, let after):
        lastError = error
        failedWith(SyncError(syncCode(error), retryAfterSeconds: after.map { Double($0.nanoseconds) / 1e9 }))
      }
    }
    if let lastError { view.driverSetWaiting(lastError, at: env.now) } else if !anyFailure { view.driverSetWaiting(nil, at: env.now) }
    // A shared zone not found: the account lost the share (with sharing only).
    var lostShare: [RecordKey] = []
    if operationScope == .shared {
      for (sent, result) in zip(changes, results) {
        if case .failed(.zoneNotFound, _) = result, let key = keys[sent.change.recordID.recordName] { lostShare.append(key) }
      }
    }
    if !saved.isEmpty || !failedSaves.isEmpty || !deleted.isEmpty || !failedDeletes.isEmpty {
      deliver(
        .sentRecordZoneChanges(
          .init(savedRecords: saved, failedRecordSaves: failedSaves, deletedRecordIDs: deleted, failedRecordDeletes: SyncErrors(failedDeletes))))
    }
    lostShareOnPush(lostShare, effects: &effects)
    if split { batchLimit = max(1, changes.count / 2) }
    failedPushes = anyFailure ? failedPushes + 1 : 0
    if anyFailure && fetchesFirstAfterFailure { fetchFirst = true }
    if let retryAfter {
      finishSend(effects: &effects)
      if automatic { retry(after: retryAfter, env: env, effects: &effects) }
    } else if failedPushes > 0 && !split {
      finishSend(effects: &effects)
      if automatic { retry(after: .seconds(Int64(1) << Int64(min(failedPushes - 1, 6))), env: env, effects: &effects) }
    } else {
      sendNext(&view, env: env, effects: &effects)
    }
  }

  /// Zone saves and deletes answered: `sentDatabaseChanges`, then the send goes on.
  func zonesAnswered(
    _ changes: [SyncEngine.PendingDatabaseChange], _ results: [ZoneChangeResult], _ view: inout DeviceState, env: DeviceEnvironment,
    effects: inout [DeviceEffect]
  ) {
    let engine = self.engine(operationScope)
    var savedZones: [SyncRecordZone] = []
    var failedSaves: [SyncEngine.Event.SentDatabaseChanges.FailedZoneSave] = []
    var deletedZones: [SyncRecordZoneID] = []
    var failedDeletes: [(SyncRecordZoneID, SyncError)] = []
    var retryAfter: SimDuration?
    for (change, result) in zip(changes, results) {
      switch result {
      case .done:
        engine.state.remove(pendingDatabaseChanges: [change])
        switch change {
        case .saveZone(let zone): savedZones.append(zone)
        case .deleteZone(let id):
          deletedZones.append(id)
          deletedByTheUser.removeAll { $0 == id }
        }
      case .failed(let error, let after):
        let failure = SyncError(syncCode(error), retryAfterSeconds: after.map { Double($0.nanoseconds) / 1e9 })
        if failure.code.isRetriedByTheEngine {
          retryAfter = max(retryAfter ?? .seconds(5), after ?? .zero)
        } else {
          engine.state.remove(pendingDatabaseChanges: [change])
        }
        switch change {
        case .saveZone(let zone): failedSaves.append(.init(zone: zone, error: failure))
        case .deleteZone(let id): failedDeletes.append((id, failure))
        }
      }
    }
    deliver(
      .sentDatabaseChanges(
        .init(savedZones: savedZones, failedZoneSaves: failedSaves, deletedZoneIDs: deletedZones, failedZoneDeletes: SyncErrors(failedDeletes))))
    if let retryAfter {
      finishSend(effects: &effects)
      if automatic { retry(after: retryAfter, env: env, effects: &effects) }
    } else {
      sendNext(&view, env: env, effects: &effects)
    }
  }

  /// What is under way stops (offline, no answer in time, cancelled): the delegate hears that
  /// what was in flight failed with `error` — it stays pending — and the operation ends.
  func interrupt(error code: SyncError.Code, effects: inout [DeviceEffect]) {
    switch inFlight {
    case .push(_, let changes, let records):
      var failedSaves: [SyncEngine.Event.SentRecordZoneChanges.FailedRecordSave] = []
      var failedDeletes: [(SyncRecordID, SyncError)] = []
      for (sent, record) in zip(changes, records) {
        if case .deleteRecord(let id) = sent.change {
          failedDeletes.append((id, SyncError(code)))
        } else {
          failedSaves.append(.init(record: record, error: SyncError(code)))
        }
      }
      inFlight = .none
      deliver(
        .sentRecordZoneChanges(
          .init(savedRecords: [], failedRecordSaves: failedSaves, deletedRecordIDs: [], failedRecordDeletes: SyncErrors(failedDeletes))))
    case .zones(_, let changes):
      var failedSaves: [SyncEngine.Event.SentDatabaseChanges.FailedZoneSave] = []
      var failedDeletes: [(SyncRecordZoneID, SyncError)] = []
      for change in changes {
        switch change {
        case .saveZone(let zone): failedSaves.append(.init(zone: zone, error: SyncError(code)))
        case .deleteZone(let id): failedDeletes.append((id, SyncError(code)))
        }
      }
      inFlight = .none
      deliver(
        .sentDatabaseChanges(.init(savedZones: [], failedZoneSaves: failedSaves, deletedZoneIDs: [], failedZoneDeletes: SyncErrors(failedDeletes))))
    case .fetch:
      inFlight = .none
    case .none:
      break
    }
    switch operation {
    case .sending(let context):
      operation = .idle
      deliver(.didSendChanges(.init(context: context)))
    case .fetching(let context, let zones):
      operation = .idle
      failFetch(context, announced: zones, error: code)
    case .idle:
      break
    }
  }
}

extension WriteResult {
  /// Whether the write failed with `limitExceeded`.
  var isLimitExceeded: Bool {
    if case .failed(.limitExceeded, _) = self { true } else { false }
  }
}
