import Foundation

/// The reference app, sharing: ``NotesApp`` with a second `SyncEngine` for the device's shared
/// database, as an app that shares writes it on `CKSyncEngine` — one engine per database, one
/// delegate for both that tells them apart by `syncEngine.database.databaseScope`.
///
/// What it does with the shared database:
/// * A fetched record of another account's zone is a row like any other (merged field by field),
///   remembered with its zone — the owner's, named by `ownerName` — so that its changes go back
///   through the shared engine; the last copy the server gave is kept, to take back an edit the
///   server refuses.
/// * Each ``SyncShare`` is kept, by its record's identity: a zone-wide share covers its zone's
///   notes, a hierarchy share (``SyncShare/rootRecordID``) its root and the notes below it. When
///   the shares covering a note say the user may only read
///   (`currentUserParticipant?.permission == .readOnly`), the app does not let the user edit it
///   (``perform(_:)`` refuses).
/// * A note that refers to another record (its first reference field: an item's list) is that
///   record's child: the app sets `CKRecord.parent` (``SyncRecord/parent``) to it when it saves
///   the note, so that sharing the list shares its items.
/// * A note made in a zone of its own (a scenario's `create … in ZONE`) is remembered with its
///   zone, as a shared one is; the zone is saved again when the server does not find it.
/// * A zone deleted from the shared database (the last share of it ended: removed, left,
///   stopped, or the owner's zone deleted) takes its rows and their pending changes with it:
///   they are not deletes, nothing is sent. A share of a zone that stays, and notes no longer
///   shared, come as deletions and go the same way.
/// * A save refused with `permissionFailure` (the share became read-only before the app heard)
///   is taken back — the row returns to the server's copy — and the delegate was told; one refused
///   with `zoneNotFound` is of a share the account lost: the row goes.
/// * On an account change the shared rows are set aside with the account's other rows, and come
///   back when it signs in again.
///
///     let report = ScenarioRunner.run(try Scenario.load("participant-removed"), app: SharingNotesApp.self).report
public class SharingNotesApp: NotesApp, @unchecked Sendable {
  /// True: it makes an engine for the shared database.
  public override class var sharesRecords: Bool { true }

  /// The shared database's engine.
  var sharedEngine: SyncEngine!
  /// The engine of the device's shared database (the app's second `SyncEngine`).
  public override var sharedSyncEngine: SyncEngine? { sharedEngine }

  /// The app's bookkeeping of the shared database on the device's disk: the shared engine's
  /// state (`state`), the zone of each row not in the app's zone (`zone/NAME`), the last server
  /// copy of each shared row (`server/NAME`), and each share (`share/OWNER/ZONE/NAME`).
  let sharingTable: SimDisk.Table
  /// The shared engine's state as of its last `stateUpdate` (or change).
  var sharedState: SyncEngine.State.Serialization?
  /// The zone of each row of another account's, or of a zone of the user's other than the
  /// app's.
  var zones: [String: SyncRecordZoneID] = [:]
  /// The last copy of each shared row the server gave (fetched or saved).
  var serverRecords: [String: SyncRecord] = [:]
  /// Each share, by ``shareKey(_:)`` of its record's identity.
  var shares: [String: SyncShare] = [:]
  /// What changed in the bookkeeping since the last save (keys of ``sharingTable``).
  var sharingTouched: Set<String> = []

  public required init(device: SimDevice) {
    sharingTable = device.disk.table("sharing")
    super.init(device: device)
    readSharing(from: sharingTable)
    sharedEngine = SyncEngine(.init(database: device.sharedDatabase, stateSerialization: sharedState, delegate: self))
  }

  /// Reads the bookkeeping of the shared database from `table`.
  func readSharing(from table: SimDisk.Table) {
    typealias Malformed = CompactReader.Malformed
    zones = [:]
    serverRecords = [:]
    shares = [:]
    sharedState = nil
    for key in table.keys {
      do throws(Malformed) {
        if key == "state" {
          sharedState = try table.row(key) { r throws(Malformed) in try r.state() }
        } else if key.hasPrefix("zone/") {
          zones[String(key.dropFirst(5))] = try table.row(key) { r throws(Malformed) in try r.zoneID() }
        } else if key.hasPrefix("server/") {
          serverRecords[String(key.dropFirst(7))] =
            try table.row(key) { r throws(Malformed) in
              let record = SyncRecord(systemFields: try r.data())
              let fields = try r.values()
              record?.fields = fields
              return record
            } ?? nil
        } else if key.hasPrefix("share/") {
          shares[String(key.dropFirst(6))] = try table.row(key) { r throws(Malformed) in
            let zone = try r.zoneID()
            let root = try r.string()
            let me = try r.string()
            let participants = try r.list { r throws(Malformed) in
              SyncShare.Participant(
                userName: try r.string(), role: try r.bool() ? .owner : .privateUser, permission: try r.bool() ? .readOnly : .readWrite,
                acceptanceStatus: try r.bool() ? .accepted : .pending)
            }
            guard !root.isEmpty else { return SyncShare(zoneID: zone, owner: participants[0], participants: participants, currentUser: me) }
            return SyncShare(
              rootRecordID: SyncRecordID(recordName: root, zoneID: zone), owner: participants[0], participants: participants, currentUser: me)
          }
        }
      } catch {
        continue
      }
    }
  }

  // MARK: Which engine, which zone

  override func engine(for recordID: SyncRecordID) -> SyncEngine {
    recordID.zoneID.ownerName == SyncRecordZoneID.currentUserName ? engine : sharedEngine
  }

  override func isShared(_ name: String) -> Bool { zones[name].map { $0.ownerName != SyncRecordZoneID.currentUserName } ?? false }

  override func id(_ name: String) -> SyncRecordID {
    guard let zone = zones[name] else { return super.id(name) }
    return SyncRecordID(recordName: name, zoneID: zone)
  }

  /// The key a share is kept by: its record's owner, zone and name.
  static func shareKey(_ id: SyncRecordID) -> String { "\(id.zoneID.ownerName)/\(id.zoneID.zoneName)/\(id.recordName)" }

  /// The record a note belongs to: the one its first reference field (in name order) names.
  func parent(of name: String) -> SyncRecordID? {
    guard let row = rows[name] else { return nil }
    for key in row.fields.keys.sorted() { if case .reference(let r)? = row.fields[key], r.recordID.recordName != name { return r.recordID } }
    return nil
  }

  /// Whether the user may change record `recordID` (or make one under it): their own; another
  /// account's unless every share the app knows to cover it is read-only for them (a zone-wide
  /// share of its zone, a hierarchy share of it or a record above it).
  func mayEdit(_ recordID: SyncRecordID) -> Bool {
    guard recordID.zoneID.ownerName != SyncRecordZoneID.currentUserName else { return true }
    var names = [recordID.recordName]
    var next = parent(of: recordID.recordName)
    while let p = next, names.count < 64, !names.contains(p.recordName) {
      names.append(p.recordName)
      next = parent(of: p.recordName)
    }
    let covering = shares.keys.sorted().compactMap { shares[$0] }.filter { share in
      guard share.recordID.zoneID == recordID.zoneID else { return false }
      guard let root = share.rootRecordID else { return true }
      return names.contains(root.recordName)
    }
    let permissions = covering.compactMap { $0.currentUserParticipant?.permission }
    return permissions.isEmpty || permissions.contains(.readWrite)
  }

  // MARK: The user's changes

  /// Makes the user's change; a change of a read-only share's notes is not allowed (the app's
  /// editing is off there, as its share says).
  public override func perform(_ intent: AppIntent) -> Bool {
    let recordID: SyncRecordID
    switch intent {
    case .create(_, let id, _), .set(let id, _), .delete(let id), .append(let id, _, _): recordID = id
    case .deleteZone: return super.perform(intent)
    }
    // (A note made in a share is checked against the record it is made under.)
    if case .create(_, _, let values) = intent, recordID.zoneID.ownerName != SyncRecordZoneID.currentUserName {
      for (_, value) in values { if case .reference(let r) = value, !mayEdit(r.recordID) { return false } }
    } else if !mayEdit(recordID) {
      return false
    }
    guard super.perform(intent) else { return false }
    if case .create = intent { setZone(recordID.zoneID == device.zoneID ? nil : recordID.zoneID, of: recordID.recordName) }
    return true
  }

  // MARK: Bookkeeping

  func setZone(_ zone: SyncRecordZoneID?, of name: String) {
    guard zones[name] != zone else { return }
    zones[name] = zone
    sharingTouched.insert("zone/" + name)
  }

  func setServerRecord(_ record: SyncRecord?, of name: String) {
    serverRecords[name] = record?.copy()
    sharingTouched.insert("server/" + name)
  }

  func setShare(_ share: SyncShare?, key: String) {
    shares[key] = share
    sharingTouched.insert("share/" + key)
  }

  /// The record to send for a pending save, with its parent (``parent(of:)``) as
  /// `CKRecord.parent`: a share of the parent shares it.
  override func record(for recordID: SyncRecordID) -> SyncRecord? {
    guard let record = super.record(for: recordID) else { return nil }
    record.setParent(parent(of: recordID.recordName))
    return record
  }

  /// A fetched record of a zone of the user's other than the app's is remembered with its zone.
  override func merge(_ server: SyncRecord) {
    let zone = server.recordID.zoneID
    if zone.ownerName == SyncRecordZoneID.currentUserName { setZone(zone == device.zoneID ? nil : zone, of: server.recordID.recordName) }
    super.merge(server)
  }

  /// A shared row goes from the app: the row, its pending changes, its bookkeeping.
  func dropShared(_ name: String) {
    guard let zone = zones[name] else { return }
    let recordID = SyncRecordID(recordName: name, zoneID: zone)
    put(name, nil)
    sharedEngine.state.remove(pendingRecordZoneChanges: [.saveRecord(recordID), .deleteRecord(recordID)])
    setZone(nil, of: name)
    setServerRecord(nil, of: name)
  }

  /// Takes back a change the server refused: the row is the server's copy again (none, for a
  /// note the server never had), with nothing pending.
  func revert(_ recordID: SyncRecordID) {
    let name = recordID.recordName
    sharedEngine.state.remove(pendingRecordZoneChanges: [.saveRecord(recordID), .deleteRecord(recordID)])
    put(name, nil)
    guard let server = serverRecords[name] else {
      setZone(nil, of: name)
      return
    }
    setZone(recordID.zoneID, of: name)
    merge(server)
  }

  override func persistState() {
    super.persistState()
    if let sharedEngine { sharedState = sharedEngine.state.serialization }
    sharingTouched.insert("state")
  }

  override func save(state: SyncEngine.State.Serialization?) {
    super.save(state: state)
    writeSharing(to: sharingTable)
  }

  /// Writes what changed of the bookkeeping.
  func writeSharing(to table: SimDisk.Table) {
    for key in sharingTouched.sorted() {
      if key == "state" {
        if let sharedState { table.put(key) { $0.state(sharedState) } } else { table.delete(key) }
      } else if key.hasPrefix("zone/") {
        if let zone = zones[String(key.dropFirst(5))] { table.put(key) { $0.zoneID(zone) } } else { table.delete(key) }
      } else if key.hasPrefix("server/") {
        if let record = serverRecords[String(key.dropFirst(7))] {
          table.put(key) { w in
            w.data(record.encodedSystemFields)
            w.values(record.fields)
          }
        } else {
          table.delete(key)
        }
      } else if key.hasPrefix("share/") {
        if let share = shares[String(key.dropFirst(6))] {
          table.put(key) { w in
            w.zoneID(share.recordID.zoneID)
            w.string(share.rootRecordID?.recordName ?? "")
            w.string(share.currentUserParticipant?.userName ?? "")
            w.list(share.participants) { w, p in
              w.string(p.userName)
              w.bool(p.role == .owner)
              w.bool(p.permission == .readOnly)
              w.bool(p.acceptanceStatus == .accepted)
            }
          }
        } else {
          table.delete(key)
        }
      }
    }
    sharingTouched = []
  }

  // MARK: Accounts

  /// The shared rows go aside with the account's others (and the shared engine's state as the
  /// app last kept it), to come back when the account signs in again.
  override func setAside(for user: String) {
    writeSharing(to: sharingTable)
    let aside = device.disk.table(Self.asideName(user, sharingTable.name))
    aside.removeAll()
    for key in sharingTable.keys {
      if let data = sharingTable.get(key) { aside.put(key, data) }
      sharingTable.delete(key)
    }
    readSharing(from: sharingTable)
    sharedEngine = SyncEngine(.init(database: device.sharedDatabase, stateSerialization: nil, delegate: self))
    super.setAside(for: user)
  }

  /// The shared rows set aside with `user` come back, with the shared engine's state.
  override func signedIn(as user: String) {
    super.signedIn(as: user)
    let aside = device.disk.table(Self.asideName(user, sharingTable.name))
    for key in aside.keys {
      if let data = aside.get(key) { sharingTable.put(key, data) }
      aside.delete(key)
    }
    readSharing(from: sharingTable)
    sharedEngine = SyncEngine(.init(database: device.sharedDatabase, stateSerialization: sharedState, delegate: self))
  }

  // MARK: The shared engine's events

  /// Handles an event of either engine: the private one's as ``NotesApp`` does, the shared one's
  /// as described above.
  public override func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
    guard syncEngine.database.databaseScope == .shared else { return await super.handleEvent(event, syncEngine: syncEngine) }
    switch event {
    case .stateUpdate(let update):
      sharedState = update.stateSerialization
      sharingTouched.insert("state")
    case .fetchedDatabaseChanges(let changes):
      // A share that ended: its zone left the shared database, and its notes leave the app.
      for deletion in changes.deletions {
        for (name, zone) in zones.sorted(by: { $0.key < $1.key }) where zone == deletion.zoneID { sharedZoneGone(name) }
        for (key, share) in shares.sorted(by: { $0.key < $1.key }) where share.recordID.zoneID == deletion.zoneID { setShare(nil, key: key) }
      }
    case .fetchedRecordZoneChanges(let changes):
      for modification in changes.modifications {
        if let share = modification.record as? SyncShare {
          setShare(share, key: Self.shareKey(share.recordID))
          continue
        }
        let record = modification.record
        setZone(record.recordID.zoneID, of: record.recordID.recordName)
        setServerRecord(record, of: record.recordID.recordName)
        merge(record)
      }
      for deletion in changes.deletions {
        // A share that ended (another of the zone stays), or a note no longer shared.
        if deletion.recordType == SyncShare.recordType {
          setShare(nil, key: Self.shareKey(deletion.recordID))
        } else {
          sharedRecordGone(deletion.recordID.recordName)
        }
      }
    case .sentRecordZoneChanges(let sent):
      for record in sent.savedRecords {
        setServerRecord(record, of: record.recordID.recordName)
        saved(record, syncEngine: syncEngine)
      }
      for failure in sent.failedRecordSaves { failedShared(failure.record.recordID, failure.error, failure: failure, syncEngine: syncEngine) }
      for (recordID, error) in sent.failedRecordDeletes { failedShared(recordID, error, failure: nil, syncEngine: syncEngine) }
      for recordID in sent.deletedRecordIDs {
        setZone(nil, of: recordID.recordName)
        setServerRecord(nil, of: recordID.recordName)
      }
    default:
      // (An account change is handled once, from the private engine's event.)
      break
    }
    save()
  }

  /// A shared note whose zone left the shared database.
  func sharedZoneGone(_ name: String) { dropShared(name) }

  /// A shared note the shared database deleted: deleted by its owner, or no longer shared.
  func sharedRecordGone(_ name: String) { dropShared(name) }

  /// A change the shared database refused: taken back when the user may not make it; the row
  /// goes when the share is gone; anything else as the private database's.
  func failedShared(
    _ recordID: SyncRecordID, _ error: SyncError, failure: SyncEngine.Event.SentRecordZoneChanges.FailedRecordSave?, syncEngine: SyncEngine
  ) {
    switch error.code {
    case .permissionFailure:
      permissionRefused(recordID)
    case .zoneNotFound:
      dropShared(recordID.recordName)
    default:
      if let failure {
        failed(failure, syncEngine: syncEngine)
      } else {
        failedDelete(recordID, error, syncEngine: syncEngine)
      }
    }
  }

  /// The server refused a change for want of permission: the row is the server's again.
  func permissionRefused(_ recordID: SyncRecordID) { revert(recordID) }
}

/// Planted bug: when a share ends (the owner removes the user, stops sharing; the user leaves
/// on another device) the app ignores the zone's deletion from the shared database and keeps
/// showing the owner's notes for good (`access-leak`).
public final class SharingNotesAppKeepingRevokedShares: SharingNotesApp, @unchecked Sendable {
  override func sharedZoneGone(_ name: String) {}
}

/// Planted bug: a change refused with `permissionFailure` is dropped and the note still shows
/// it, as if saved: the user's edit is lost without a word (`lost-edit`).
public final class SharingNotesAppIgnoringPermissionFailure: SharingNotesApp, @unchecked Sendable {
  override func permissionRefused(_ recordID: SyncRecordID) {
    guard var row = rows[recordID.recordName] else { return }
    row.dirty = []
    put(recordID.recordName, row)
  }
}
