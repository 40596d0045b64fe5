import Foundation

@testable import SimSyncEngine

/// A notes app written on the `SimSyncEngine` API as one would write it on `CKSyncEngine`: rows
/// in memory, persisted to disk after every change with the engine's state; fetched records
/// merged under pending local edits; failed saves retried or merged.
class NotesApp: SimApp, SyncEngineDelegate, @unchecked Sendable {
  struct Row: Codable, Hashable {
    var recordType: String
    var fields: [String: SyncValue]
    /// The fields changed here and not yet saved.
    var dirty: Set<String>
    /// The last server version's system fields.
    var system: Data?
  }
  struct Saved: Codable {
    var rows: [String: Row]
    var state: SyncEngine.State.Serialization?
  }

  let device: SimDevice
  var rows: [String: Row] = [:]
  var state: SyncEngine.State.Serialization?
  var engine: SyncEngine!
  var syncEngine: SyncEngine { engine }

  required init(device: SimDevice) {
    self.device = device
    if let data = device.disk["notes"], let saved = try? JSONDecoder().decode(Saved.self, from: data) {
      rows = saved.rows
      state = saved.state
    }
    engine = SyncEngine(.init(database: device.database, stateSerialization: state, delegate: self))
  }

  func save() {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    device.disk["notes"] = try? encoder.encode(Saved(rows: rows, state: state))
  }

  func id(_ name: String) -> SyncRecordID { SyncRecordID(recordName: name, zoneID: device.zoneID) }

  func perform(_ intent: AppIntent) -> Bool {
    switch intent {
    case .create(let type, let recordID, let values):
      var row = Row(recordType: type, fields: [:], dirty: [], system: nil)
      for (f, v) in values {
        row.fields[f] = v
        row.dirty.insert(f)
      }
      rows[recordID.recordName] = row
      engine.state.add(pendingRecordZoneChanges: [.saveRecord(recordID)])
    case .set(let recordID, let values):
      guard var row = rows[recordID.recordName] else { return false }
      for (f, v) in values {
        row.fields[f] = v
        row.dirty.insert(f)
      }
      rows[recordID.recordName] = row
      engine.state.add(pendingRecordZoneChanges: [.saveRecord(recordID)])
    case .delete(let recordID):
      guard rows[recordID.recordName] != nil else { return false }
      rows[recordID.recordName] = nil
      engine.state.add(pendingRecordZoneChanges: [.deleteRecord(recordID)])
    }
    state = engine.state.serialization
    save()
    return true
  }

  func shownRecords() -> [SyncRecord] {
    rows.keys.sorted().map { name in
      let row = rows[name]!
      let r = SyncRecord(recordType: row.recordType, recordID: id(name))
      r.fields = row.fields
      return r
    }
  }

  func record(for recordID: SyncRecordID) -> SyncRecord? {
    guard let row = rows[recordID.recordName] else { return nil }
    let r = row.system.flatMap { SyncRecord(systemFields: $0) } ?? SyncRecord(recordType: row.recordType, recordID: recordID)
    for (f, v) in row.fields.sorted(by: { $0.key < $1.key }) { r[f] = v }
    return r
  }

  /// A fetched version under this device's pending edits: the server's fields, then ours.
  func merge(_ server: SyncRecord) { mergeKeepingPendingEdits(server) }

  func mergeKeepingPendingEdits(_ server: SyncRecord) {
    var row = rows[server.recordID.recordName] ?? Row(recordType: server.recordType, fields: [:], dirty: [], system: nil)
    for key in server.allKeys() where !row.dirty.contains(key) { row.fields[key] = server.fields[key] }
    row.system = server.encodedSystemFields
    rows[server.recordID.recordName] = row
  }

  func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
    switch event {
    case .stateUpdate(let update):
      state = update.stateSerialization
    case .fetchedRecordZoneChanges(let changes):
      for r in changes.modifications { merge(r) }
      for d in changes.deletions { rows[d.recordID.recordName] = nil }
    case .sentRecordZoneChanges(let sent):
      for r in sent.savedRecords {
        guard var row = rows[r.recordID.recordName] else { continue }
        row.system = r.encodedSystemFields
        // What the server now has is clean, unless edited again since.
        if !syncEngine.state.pendingRecordZoneChanges.contains(.saveRecord(r.recordID)) { row.dirty = [] }
        rows[r.recordID.recordName] = row
      }
      for failed in sent.failedRecordSaves {
        switch failed.error.code {
        case .serverRecordChanged:
          if let server = failed.error.serverRecord { merge(server) }
          syncEngine.state.add(pendingRecordZoneChanges: [.saveRecord(failed.record.recordID)])
        case .unknownItem:
          if var row = rows[failed.record.recordID.recordName] {
            row.system = nil
            row.dirty = Set(row.fields.keys)
            rows[failed.record.recordID.recordName] = row
            syncEngine.state.add(pendingRecordZoneChanges: [.saveRecord(failed.record.recordID)])
          }
        default:
          break  // transient errors stay pending in the engine
        }
      }
    default:
      break
    }
    save()
  }

  func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async -> SyncEngine.RecordZoneChangeBatch? {
    await SyncEngine.RecordZoneChangeBatch(pendingChanges: syncEngine.state.pendingRecordZoneChanges) { self.record(for: $0) }
  }
}

/// Planted bug: a fetched record is applied over the row, pending local edits included.
final class OverwritingNotesApp: NotesApp, @unchecked Sendable {
  override func merge(_ server: SyncRecord) {
    var row = rows[server.recordID.recordName] ?? Row(recordType: server.recordType, fields: [:], dirty: [], system: nil)
    for key in server.allKeys() { row.fields[key] = server.fields[key] }
    row.system = server.encodedSystemFields
    rows[server.recordID.recordName] = row
  }
}

/// Planted bug: the engine's state is never written to disk (no `stateUpdate` handling and no
/// save of the state with the rows), so a kill forgets the changes not yet sent.
final class ForgetfulNotesApp: NotesApp, @unchecked Sendable {
  override func save() {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    device.disk["notes"] = try? encoder.encode(Saved(rows: rows, state: nil))
  }
}
