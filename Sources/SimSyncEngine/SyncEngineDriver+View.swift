import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// What the world sees of the device after every step, and the records as the app sees them.
extension SyncEngineDriver {
  /// After a step: starts what is queued, then tells the world what the app shows (records with
  /// their provenance), which records have changes not yet sent, the token, whether a request is
  /// out — and which unsent changes the app dropped while still showing them.
  func update(_ view: inout DeviceState, env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    if runsItsOwnDeleteRules, let app {
      // The delete rules the app carried out in the step, before anything is sent: a delete it
      // sends must carry its intent.
      noteRules(shown: shownRecords(of: app), effects: &effects)
    }
    let calls = deliveries
    pump(&view, env: env, effects: &effects)
    if hasAssets { syncFiles(&view, env: env, effects: &effects) }
    guard let app else { return }  // killed: the store on disk is what it was
    // (Read again only when starting a send or fetch called the app's code.)
    let shown = runsItsOwnDeleteRules && deliveries == calls ? lastShownList : shownRecords(of: app)
    if runsItsOwnDeleteRules {
      // (Read only by the delete rules the app carries out.)
      lastShown = [:]
      for r in shown { lastShown[r.key] = r }
    }
    lastShownList = shown
    stepDeleted = []
    stepTaken = []
    let pending = pendingKeys(app)
    noteDropped(shown: shown, pending: Set(pending), effects: &effects)
    // Nothing left to send: the engine waits on no error.
    if pending.isEmpty, view.waitingOn != nil { view.driverSetWaiting(nil, at: env.now) }
    let busy: Bool
    if case .none = inFlight { busy = false } else { busy = true }
    view.driverUpdate(shown: shown, pending: pending, token: app.syncEngine.state.changeToken, busy: busy, effects: &effects)
    if sharingRun {
      view.driverSetShared(token: app.sharedSyncEngine?.state.changeToken, sharedKeys: newSharedKeys)
      newSharedKeys = []
    }
    stateChanged(effects: &effects)
    if relaunchedWithPending {
      relaunchedWithPending = false
      scheduleSend(view, effects: &effects)
    }
    if let log = provenance.behaviour { log.steps.append(step(app, shown: shown, at: stepTime, effects: effects)) }
  }

  /// What the app shows, as records with their provenance, in key order.
  ///
  /// Read whole (``SimApp/shownRecords()``) after a launch, and every time from an app that
  /// cannot say what changed; otherwise only the records the app says changed since the last
  /// read (``SimApp/shownRecordChanges()``) are read, and the others are what they were — with
  /// their provenance found again only for the records whose provenance may have changed
  /// meanwhile (an intent made, a rule carried out: ``ProvenanceRegistry/touched``). No code of
  /// the app ran since the last read: nothing is asked of it.
  func shownRecords(of app: App) -> [RecordState] {
    let target = Unchecked(app)
    var startTracking = false
    if shownCache.launch == launches {
      // No code of the app ran since the last read: it shows what it showed.
      let changes =
        appEntries == shownCache.appEntries ? SimShownChanges(changed: [], removed: []) : inApp({ await target.value.shownRecordChanges() }) ?? nil
      if let changes {
        let shown = applyShownChanges(changes)
        #if DEBUG
          // What was kept is what would be made again now (the tests run debug builds).
          for (key, row) in shownCache.rows {
            assert(row.state == recordState(key, type: row.type, values: row.values), "the kept provenance of record \(key) is stale")
          }
        #endif
        shownCache.appEntries = appEntries
        if runsItsOwnDeleteRules { lastShownList = shown }
        return shown
      }
      shownCache = ShownCache(untracked: launches)  // it stopped telling: read whole from now on
    } else if shownCache.untracked != launches {
      // The app's first call since its launch: it starts keeping track (and says nil).
      if inApp({ await target.value.shownRecordChanges() }) ?? nil == nil { startTracking = true }
    } else if shownCache.keptWhole, appEntries == shownCache.appEntries {
      // An app that does not tell what changed, and no code of it ran since it was read whole:
      // it shows what it showed (provenance found again where it may have changed).
      let shown = applyShownChanges(SimShownChanges(changed: [], removed: []))
      #if DEBUG
        for (key, row) in shownCache.rows {
          assert(row.state == recordState(key, type: row.type, values: row.values), "the kept provenance of record \(key) is stale")
        }
      #endif
      if runsItsOwnDeleteRules { lastShownList = shown }
      return shown
    }
    // Read whole. A record shown with the type and values it had at the last whole read keeps
    // the provenance found then, unless that may have changed since — nothing is kept when what
    // any provenance is found from changed (an app that does not tell
    // what changed is read whole after every step in which its code ran: finding provenance
    // again for every record it shows was most of the simulator's time around it).
    let keep = shownCache.untracked == launches && shownCache.keptWhole && shownCache.generation == provenance.generation
    let stale = keep ? touchedKeptKeys() : []
    var shown: [RecordState] = []
    var rows: [RecordKey: ShownCache.Row] = [:]
    var shownTwice = false
    for record in inApp({ await target.value.shownRecords() }) ?? [] {
      guard let key = keys[record.recordID.recordName] else {
        fail(unknownName(record.recordID.recordName, type: record.recordType, shown: true))
        continue
      }
      guard let type = schema.typeIndex(named: record.recordType) else { continue }
      let state: RecordState
      let values = values(of: record, type: type)
      if keep, let row = shownCache.rows[key], row.type == Int32(type), !stale.contains(key), row.values == values {
        state = row.state
        #if DEBUG
          assert(state == recordState(key, type: Int32(type), values: values), "the kept provenance of record \(key) is stale")
        #endif
      } else {
        state = recordState(key, type: Int32(type), values: values)
      }
      shown.append(state)
      // (A record shown twice cannot be kept by key: such an app is read whole every time, and
      // nothing of it is kept.)
      if rows.updateValue(ShownCache.Row(type: Int32(type), values: values, state: state), forKey: key) != nil { shownTwice = true }
    }
    shown.sort { $0.key < $1.key }
    if startTracking && !shownTwice {
      shownCache = ShownCache(launch: launches, rows: rows, list: shown, generation: provenance.generation)
      shownCache.touchedSeen = provenance.touched.count
      shownCache.appEntries = appEntries
    } else if shownCache.launch != launches {
      shownCache = ShownCache(untracked: launches)
      if !shownTwice {
        shownCache.keptWhole = true
        shownCache.rows = rows
        shownCache.list = shown
        shownCache.generation = provenance.generation
        shownCache.touchedSeen = provenance.touched.count
        shownCache.appEntries = appEntries
      }
    }
    if runsItsOwnDeleteRules { lastShownList = shown }
    return shown
  }

  /// The kept records whose provenance was touched since the cache last looked (an intent made,
  /// a rule carried out: ``ProvenanceRegistry/touched``), when what provenance is found from did
  /// not change meanwhile.
  func touchedKeptKeys() -> Set<RecordKey> {
    let touched = provenance.touched
    guard shownCache.touchedSeen < touched.count else { return [] }
    var stale: Set<RecordKey> = []
    for key in touched[shownCache.touchedSeen...] where shownCache.rows[key] != nil { stale.insert(key) }
    return stale
  }

  /// The records the app shows, after the changes it reports: the cache updated, each record
  /// changed made again with its provenance, and each whose provenance may have changed since
  /// the last read (every record, when what any record's provenance is found from changed).
  func applyShownChanges(_ changes: SimShownChanges) -> [RecordState] {
    let generation = provenance.generation
    let again = shownCache.generation != generation
    let stale = again ? [] : touchedKeptKeys()
    shownCache.touchedSeen = provenance.touched.count
    var changed = again || !stale.isEmpty
    var made: Set<RecordKey> = []
    for name in changes.removed {
      if let key = keys[name], shownCache.rows.removeValue(forKey: key) != nil { changed = true }
    }
    for record in changes.changed {
      guard let key = keys[record.recordID.recordName] else {
        fail(unknownName(record.recordID.recordName, type: record.recordType, shown: true))
        continue
      }
      changed = true
      guard let type = schema.typeIndex(named: record.recordType) else {
        shownCache.rows[key] = nil
        continue
      }
      let values = values(of: record, type: type)
      let state = recordState(key, type: Int32(type), values: values)
      shownCache.rows[key] = ShownCache.Row(type: Int32(type), values: values, state: state)
      made.insert(key)
    }
    guard changed else { return shownCache.list }
    if again {
      for (key, row) in shownCache.rows where !made.contains(key) {
        shownCache.rows[key]?.state = recordState(key, type: row.type, values: row.values)
      }
      shownCache.generation = generation
    } else {
      for key in stale where !made.contains(key) {
        guard let row = shownCache.rows[key] else { continue }
        shownCache.rows[key]?.state = recordState(key, type: row.type, values: row.values)
      }
    }

    shownCache.list = shownCache.rows.keys.sorted().map { shownCache.rows[$0]!.state }
    return shownCache.list
  }

  /// Whether `shown` (in key order) holds each record of ``lastShown`` once, as it was there.
  func showsAsBefore(_ shown: [RecordState]) -> Bool {
    var previous: RecordKey = -1
    for r in shown {
      guard r.key > previous, lastShown[r.key] == r else { return false }
      previous = r.key
    }
    return true
  }

  /// The delete rules of the schema the app carried out in the step: a record it no longer
  /// shows, deleted by no intent or fetched deletion, whose `cascade` reference named a record
  /// the device knows deleted; a `nullify` reference cleared when the record it named was. Each
  /// is logged as the rule's intent (``DeviceEffect/ruleIntent(_:)``), with the ids that follow
  /// the world's next.
  func noteRules(shown: [RecordState], effects: inout [DeviceEffect]) {
    // A rule is carried out only where a record the app showed is gone or a reference it showed
    // was cleared: with nothing taken in during the step and every record shown as it was, none
    // can have been (the common step, made without the walk below).
    if !walksEveryStepForRules, stepTaken.isEmpty, shown.count == lastShown.count, showsAsBefore(shown) { return }
    var now: [RecordKey: RecordState] = [:]
    for r in shown { now[r.key] = r }
    // What the app showed, and what it was given in the step (a fetched record it dropped at
    // once because its parent is deleted; a newer copy of one it showed, which it went by).
    var candidates = lastShown
    var newer: [RecordKey: RecordState] = [:]
    for copy in stepTaken where !copy.isDeleted {
      if candidates[copy.key] == nil { candidates[copy.key] = copy } else { newer[copy.key] = copy }
    }
    for (key, shownBefore) in candidates.sorted(by: { $0.key < $1.key }) where !stepDeleted.contains(key) {
      let fields = schema.types[Int(shownBefore.type)].fields
      if now[key] == nil {
        for (f, field) in fields.enumerated() where field.onDelete == .cascade {
          // The copy whose reference names a deleted record: the newer one the step brought,
          // else the one shown.
          func deletedParent(_ copy: RecordState) -> RecordKey? {
            if case .ref(let p) = copy.fields[f].value, knownDeletes[p] != nil { return p }
            return nil
          }
          guard let parent = newer[key].flatMap(deletedParent) ?? deletedParent(shownBefore), let by = knownDeletes[parent] else { continue }
          let id = nextRuleID
          nextRuleID += 1
          effects.append(.ruleIntent(RuleIntent(id: id, record: key, field: Int32(f), parent: parent, trigger: by, cascade: true)))
          deleters[key] = id
          ownDeletes[key] = id
          knownDeletes[key] = id
          provenance.setIncarnation(of: id, shownBefore.creator)
          break
        }
      } else if let after = now[key] {
        for (f, field) in fields.enumerated() where field.onDelete == .nullify {
          guard case .ref(let parent) = shownBefore.fields[f].value, after.fields[f].value == .null, let by = knownDeletes[parent] else { continue }
          let id = nextRuleID
          nextRuleID += 1
          effects.append(.ruleIntent(RuleIntent(id: id, record: key, field: Int32(f), parent: parent, trigger: by, cascade: false)))
          provenance.wrote(.null, to: Int32(f), of: key, by: id)
          provenance.setIncarnation(of: id, shownBefore.creator)
        }
      }
    }
  }

  /// Records whose change was pending before the step and is not now, though the server never
  /// acknowledged what the app shows of them: the change will never be sent
  /// (``DeviceFact/appDropped(_:cause:)``). Why: the app relaunched without it after a kill; an
  /// earlier save of the record was acknowledged in the step; a CloudKit error met it; or the
  /// app removed it.
  func noteDropped(shown: [RecordState], pending: Set<RecordKey>, effects: inout [DeviceEffect]) {
    defer {
      lastPending = pending
      stepAcknowledged = []
      stepErrors = [:]
      accountChangedThisStep = false
      stepAccessEnded = []
      stepRefused = [:]
    }
    guard !accountChangedThisStep else { return }
    var byCause: [(AppDropCause, [RecordKey])] = []
    func note(_ key: RecordKey, _ cause: AppDropCause) {
      if let i = byCause.firstIndex(where: { $0.0 == cause }) { byCause[i].1.append(key) } else { byCause.append((cause, [key])) }
    }
    var dropped = lastPending.subtracting(pending)
    if let forgotten {
      for key in forgotten.keys.sorted() where !pending.contains(key) && showsUnsent(key, shown) {
        note(key, .notPersistedBeforeKill(at: forgotten.at, stateUpdated: forgotten.stateUpdated.sorted()))
      }
      dropped.subtract(forgotten.keys)
      self.forgotten = nil
    }
    var refused: [RecordKey] = []
    var reverted: [RecordKey] = []
    for key in dropped.sorted() where !stepAccessEnded.contains(key) && stepErrors[key] == SyncError.Code.permissionFailure.rawValue {
      // Refused for want of permission: taken back (the app shows the server's record, or no
      // longer what it sent) and the delegate was told — or kept shown as saved.
      if !showsUnsent(key, shown) || !showsRefused(key, shown) { reverted.append(key) } else { refused.append(key) }
    }
    if !reverted.isEmpty { effects.append(.fact(.permissionRefused(reverted, reverted: true))) }
    if !refused.isEmpty { effects.append(.fact(.permissionRefused(refused, reverted: false))) }
    for key in dropped.sorted() where showsUnsent(key, shown) && !stepAccessEnded.contains(key) {
      if stepErrors[key] == SyncError.Code.permissionFailure.rawValue { continue }
      if stepAcknowledged.contains(key) {
        note(key, .clearedInFlight)
      } else if let code = stepErrors[key] {
        note(key, .afterError(code))
      } else {
        note(key, .removed)
      }
    }
    for (cause, keys) in byCause { effects.append(.fact(.appDropped(keys, cause: cause))) }
  }

  /// Whether the app still shows the change the server refused of `key` in this step: the values
  /// the refused save carried (the app's own bookkeeping fields aside), or no record for a
  /// refused delete.
  func showsRefused(_ key: RecordKey, _ shown: [RecordState]) -> Bool {
    let mine = shown.first { $0.key == key }
    guard let sent = stepRefused[key] else { return true }
    guard let values = sent else { return mine == nil }
    guard let mine else { return false }
    let type = mine.type
    return mine == recordState(key, type: type, values: values)
  }

  /// Whether the app shows something of a record the server does not have, as far as this
  /// device knows: a value the last copy from the server does not hold, a record the server
  /// never had, or no record where the server has one.
  func showsUnsent(_ key: RecordKey, _ shown: [RecordState]) -> Bool {
    let mine = shown.first { $0.key == key }
    let server = serverCopies[key].flatMap { $0.isDeleted ? nil : $0 }
    switch (mine, server) {
    case (nil, nil): return false
    case (nil, _?), (_?, nil): return true
    case (let mine?, let server?):
      guard mine.fields.count == server.fields.count else { return true }
      for (a, b) in zip(mine.fields, server.fields) {
        switch (a.value, b.value) {
        case (.text(let x), .text(let y)): if x.string != y.string { return true }
        default: if a.value != b.value { return true }
        }
      }
      return false
    }
  }

  /// The device took in a copy of a record from the server (its assets as `assets` says:
  /// ``stageAssets(of:delivery:)``).
  func took(_ copy: RecordState, assets: AssetDelivery = .fetched, effects: inout [DeviceEffect]) {
    effects.append(.took(hasAssets ? stageAssets(of: copy, delivery: assets) : copy))
    serverCopies[copy.key] = copy
    if copy.isDeleted {
      knownDeletes[copy.key] = copy.deletedBy
      stepDeleted.insert(copy.key)
    } else if runsItsOwnDeleteRules {
      stepTaken.append(copy)
    }
  }

  /// The behaviour log's line for the step just made: what the app shows, has pending and sent,
  /// and what its disk holds (as a digest of its files).
  func step(_ app: App, shown: [RecordState], at now: VirtualTime, effects: [DeviceEffect]) -> AppBehaviourLog.Step {
    var text = "shows"
    for r in shown { text += " \(ids[Int(r.key)]){" + r.fields.map { "\($0.value)" }.joined(separator: ",") + "}" }
    let pending = (app.syncEngine.state.pendingRecordZoneChanges + (sharingRun ? app.sharedSyncEngine?.state.pendingRecordZoneChanges ?? [] : []))
      .map { "\($0)" }.sorted()
    text += "; pending " + pending.joined(separator: " ")
    for case .send(.push(_, let writes, _)) in effects {
      text +=
        "; sends "
        + writes.map { w in
          "\(ids[Int(w.record.key)])" + (w.isDelete ? "(delete)" : "{" + w.record.fields.map { "\($0.value)" }.joined(separator: ",") + "}")
        }.joined(separator: " ")
    }
    var disk = StableHasher()
    for name in self.disk.names {
      disk.combine(name)
      for byte in self.disk[name] ?? Data() { disk.combine(byte: byte) }
    }
    // The keyed stores' rows, after the files (a disk of files alone digests as it always did).
    var rows = 0
    for tableName in self.disk.tableNames {
      let table = self.disk.table(tableName)
      disk.combine("table " + tableName)
      for key in table.keys {
        disk.combine(key)
        for byte in table.get(key) ?? Data() { disk.combine(byte: byte) }
        rows += 1
      }
    }
    // The device's asset files, after the rest (a run without them digests as it always did).
    var assetFiles = 0
    for path in files.files.keys.sorted() {
      guard let content = files.files[path] else { continue }
      disk.combine("asset-file " + path + " " + content.name)
      disk.combine(content.size)
      assetFiles += 1
    }
    let what = "\(self.disk.names.count) files" + (rows > 0 ? " \(rows) rows" : "") + (assetFiles > 0 ? " \(assetFiles) asset files" : "")
    return .init(time: now, device: name, input: stepInput, outcome: text, disk: what + " #" + String(disk.value, radix: 16))
  }

  /// An input, as the behaviour log names it.
  static func describe(_ input: DeviceInput) -> String {
    switch input {
    case .kill: "kill"
    case .connectivity(let up): up ? "online" : "offline"
    case .syncNow: "sync"
    case .sendNow: "send"
    case .fetchNow: "fetch"
    case .timer(let kind, _): "timer \(kind)"
    case .message(.notify): "push notification"
    case .message(.pushReply): "push reply"
    case .message(.fetchReply): "fetch reply"
    case .message(.zonesReply): "zones reply"
    default: "\(input)"
    }
  }

  /// A record's values as the simulator reads them: its fields, and for a type with a field
  /// marked `parent` that the record does not hold, its ``SyncRecord/parent`` as that field.
  func values(of record: SyncRecord, type: Int) -> [String: SyncValue] {
    guard let parent = record.parent, type < parentFields.count, let f = parentFields[type] else { return record.fields }
    let name = schema.types[type].fields[f].name
    guard record.fields[name] == nil else { return record.fields }
    var values = record.fields
    values[name] = .reference(parent)
    return values
  }

  func recordState(_ key: RecordKey, type: Int32, values: [String: SyncValue]) -> RecordState {
    let spec = schema.types[Int(type)]
    var fields: [FieldValue] = []
    fields.reserveCapacity(spec.fields.count)
    for (f, field) in spec.fields.enumerated() {
      let shown = values[field.name]
      if field.kind == .text, case .string(let shown)? = shown {
        let (text, writer) = provenance.text(shown, field: Int32(f), of: key)
        fields.append(FieldValue(value: .text(text), writer: writer, stamp: .origin))
        continue
      }
      let value = shown.map { simValue($0, kind: field.kind) } ?? field.initialValue
      // (An asset saved without its data is still the asset its write wrote: what is missing is
      // judged as missing-asset.)
      let wrote = value.asWritten
      let writer = written[key]?.last { $0.field == Int32(f) && $0.value == wrote }?.intent ?? 0
      fields.append(FieldValue(value: value, writer: writer, stamp: .origin))
    }
    var creator = creators[key] ?? 0
    var creatorDevice = provenance.creatorDevices[key] ?? Int32(index)
    if !provenance.recreated.isEmpty, provenance.recreated.contains(key),
      let latest = zip(fields, spec.fields).compactMap({ $0.value == $1.initialValue ? nil : provenance.incarnations[$0.writer] }).max()
    {
      // A record created again after a delete: the copy is of the latest incarnation any of its
      // values was written in. (Not a value equal to the field's initial one: which write it
      // came from cannot be told, and taking the last such write — a delete rule clearing a
      // reference in the record made again elsewhere — once labelled a copy of the earlier
      // record as the later one, and the server then refused the later one's saves for ever.)
      creator = latest
      creatorDevice = provenance.incarnationDevices[latest] ?? creatorDevice
    }
    return RecordState(key: key, type: type, creator: creator, creatorDevice: creatorDevice, fields: fields, stamp: .origin)
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
    case .double(let d): .double(d)
    case .bytes(let b): .data(Data(b))
    case .content(let c): appValue(.content(c), field: "", delivery: .withoutData)
    }
  }

  /// A value the app stored, as the simulator holds it in a field of `kind`. A `Double` in a
  /// `double` field is itself (NaN, which equals nothing, is no value); elsewhere it is the whole
  /// number toward zero (the nearer end past Int64's range). `Data` in a `bytes` field is its
  /// bytes; elsewhere its base-64 text.
  func simValue(_ v: SyncValue, kind: FieldKind) -> Value {
    switch v {
    case .string(let s): .string(s)
    case .int(let n): kind == .double ? Double(exactly: n).map(Value.double) ?? .int(n) : .int(n)
    case .double(let d) where kind == .double: d.isNaN ? .null : .double(d)
    case .double(let d): d.isNaN ? .null : .int(Int64(exactly: d.rounded(.towardZero)) ?? (d > 0 ? .max : .min))
    case .bool(let b): .bool(b)
    case .date(let ns): .date(ns)
    case .data(let d) where kind == .bytes: SizedBytes.content(d) ?? .bytes([UInt8](d))
    case .data(let d): .string(d.base64EncodedString())
    case .reference(let r): keys[r.recordID.recordName].map(Value.ref) ?? .null
    case .strings(let s): s.isEmpty ? .null : .string(s.joined(separator: ","))
    case .asset(let a): simAsset(a)
    }
  }

  /// A record as the server has it, for the app: its fields (its assets as `assets` says, its
  /// encrypted fields among its `encryptedValues`), the app's own extra fields saved with it, its
  /// change tag and the server-set dates.
  func syncRecord(_ r: RecordState, assets: AssetDelivery = .fetched) -> SyncRecord {
    let record = SyncRecord(recordType: r.typeName(in: schema), recordID: recordID(r.key))
    let specs = schema.types[Int(r.type)].fields
    let extras = provenance.extras[r.key]?[r.fields.map(\.value)]
    // (Built at its final size and then stored: growing the record's dictionary a field at a
    // time rehashed it three or four times a record.)
    var fields: [String: SyncValue] = [:]
    fields.reserveCapacity(specs.count + (extras?.count ?? 0))
    for f in specs.indices where r.fields[f].value != .null {
      if case .content = r.fields[f].value {
        fields[specs[f].name] = appValue(r.fields[f].value, field: specs[f].name, delivery: assets)
      } else {
        fields[specs[f].name] = syncValue(r.fields[f].value)
      }
      if specs[f].encrypted, isEncrypted(specs[f]) { record.encrypted.insert(specs[f].name) }
    }
    for (key, value) in extras ?? [:] { fields[key] = value }
    // (Extra fields the app wrote among `encryptedValues` come back there.)
    if let encrypted = provenance.encryptedExtras[r.key]?[r.fields.map(\.value)] { record.encrypted.formUnion(encrypted) }
    record.fields = fields
    // The field marked `parent` is the record's `CKRecord.parent` too.
    if Int(r.type) < parentFields.count, let f = parentFields[Int(r.type)], case .ref(let p) = r.fields[f].value {
      record.parent = SyncRecord.Reference(recordID: recordID(p), action: .none)
      record.parentChanged = false
    }
    record.system.recordChangeTag = changeTag(r.changeTag, of: r.key)
    if r.stamp.device == Stamp.serverDates {
      record.system.modificationDate = r.stamp.clock
      record.system.creationDate = r.stamp.hlcWall
    }
    return record
  }
}

extension SyncEngineDriver {
  /// The database a copy of record `key` is of: its owner's, for a record another account
  /// shares with this one; else the signed-in account's private database.
  func database(of key: RecordKey) -> Int32 {
    if let owner = ownerOf[key], owner != signedIn { return owner }
    return signedIn ?? 0
  }

  /// A change tag as the app is handed it: the server's version, and the database it is of
  /// (CloudKit's tags are opaque strings, and a tag names a version of one record in one
  /// database: a save carrying a tag from another database is of a record this one does not
  /// have). The first account's tags are the bare number.
  func changeTag(_ tag: Int64, of key: RecordKey) -> String {
    let db = database(of: key)
    return db == 0 ? String(tag) : "\(tag)@\(db)"
  }

  /// The server's version a change tag the app sent names, in the database the save goes to:
  /// nil for no tag; -1 for a tag of another database (or one the simulator never made), which
  /// names no version there.
  func baseTag(_ tag: String?, of key: RecordKey) -> Int64? {
    guard let tag else { return nil }
    let parts = tag.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
    guard let n = Int64(parts[0]), n > 0 else { return -1 }
    let db = parts.count == 2 ? Int32(parts[1]) : 0
    return db == database(of: key) ? n : -1
  }
}

extension RecordState {
  func typeName(in schema: Schema) -> String { schema.types[Int(type)].name }
}

/// What an app showed when the driver last read it (``SyncEngineDriver/shownRecords(of:)``):
/// each record's type and values as the app gave them, and the record with its provenance.
struct ShownCache {
  struct Row {
    var type: Int32
    var values: [String: SyncValue]
    var state: RecordState
  }
  /// The launch of the app the cache is of (0: none); the launch of an app that does not tell
  /// what changed (read whole every time).
  var launch = 0
  var untracked = 0
  /// For an app that does not tell what changed: whether `rows` (and the rest) are of its last
  /// whole read.
  var keptWhole = false
  var rows: [RecordKey: Row] = [:]
  /// The records in key order.
  var list: [RecordState] = []
  /// The provenance registry's generation the records were made at.
  var generation: UInt64 = 0
  /// The driver's count of calls into the app's code when it was last read.
  var appEntries = 0
  /// How much of the registry's ``ProvenanceRegistry/touched`` the records have seen.
  var touchedSeen = 0

  init() {}
  init(untracked: Int) { self.untracked = untracked }
  init(launch: Int, rows: [RecordKey: Row], list: [RecordState], generation: UInt64) {
    self.launch = launch
    self.rows = rows
    self.list = list
    self.generation = generation
  }
}
