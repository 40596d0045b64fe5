import Foundation
import SimSyncEngine

/// The app's data, kept as Apple's sample keeps it: rows and the engine's last state, in one
/// file written after every change.
struct AppData: Codable {
  struct Row: Codable {
    var type: String
    var fields: [String: SyncValue]
    /// The system fields of the last version the server confirmed.
    var system: Data?
  }
  var rows: [String: Row] = [:]
  var stateSerialization: SyncEngine.State.Serialization?
}

extension Logger {
  static let database = Logger(subsystem: "com.example.contacts", category: "Database")
}

/// The rest of the store of docs/your-engine.md's actor example: the user's changes, what it
/// shows, and its delegate methods.
extension SyncedDatabase: SyncEngineDelegate {
  func persistLocalData() {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    device.disk["contacts.json"] = try? encoder.encode(appData)
  }

  func perform(_ intent: AppIntent) -> Bool {
    guard let engine = syncEngine else { return false }
    switch intent {
    case .create(let type, let id, let values):
      appData.rows[id.recordName] = AppData.Row(type: type, fields: Dictionary(values.map { ($0.field, $0.value) }) { $1 })
      engine.state.add(pendingRecordZoneChanges: [.saveRecord(id)])
    case .set(let id, let values):
      guard appData.rows[id.recordName] != nil else { return false }
      for (field, value) in values { appData.rows[id.recordName]!.fields[field] = value }
      engine.state.add(pendingRecordZoneChanges: [.saveRecord(id)])
    case .delete(let id):
      guard appData.rows.removeValue(forKey: id.recordName) != nil else { return false }
      engine.state.add(pendingRecordZoneChanges: [.deleteRecord(id)])
    case .append(let id, let field, let text):
      guard var row = appData.rows[id.recordName], case .string(let old) = row.fields[field] ?? .string("") else { return false }
      row.fields[field] = .string(old + text)
      appData.rows[id.recordName] = row
      engine.state.add(pendingRecordZoneChanges: [.saveRecord(id)])
    case .deleteZone:
      appData.rows = [:]
      engine.state.remove(pendingRecordZoneChanges: engine.state.pendingRecordZoneChanges)
    }
    appData.stateSerialization = engine.state.serialization
    persistLocalData()
    return true
  }

  func shownRecords() -> [SyncRecord] {
    appData.rows.keys.sorted().map { name in
      let row = appData.rows[name]!
      let record = SyncRecord(recordType: row.type, recordID: SyncRecordID(recordName: name, zoneID: device.zoneID))
      for (field, value) in row.fields { record[field] = value }
      return record
    }
  }

  func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
    switch event {
    case .stateUpdate(let update):
      appData.stateSerialization = update.stateSerialization
    case .fetchedRecordZoneChanges(let changes):
      for modification in changes.modifications { merge(modification.record, syncEngine: syncEngine) }
      for deletion in changes.deletions { appData.rows[deletion.recordID.recordName] = nil }
    case .sentRecordZoneChanges(let sent):
      for record in sent.savedRecords { appData.rows[record.recordID.recordName]?.system = record.encodedSystemFields }
      for failure in sent.failedRecordSaves where failure.error.code == .serverRecordChanged {
        if let server = failure.error.serverRecord { appData.rows[server.recordID.recordName]?.system = server.encodedSystemFields }
        syncEngine.state.add(pendingRecordZoneChanges: [.saveRecord(failure.record.recordID)])
      }
    default:
      Logger.database.debug("Not handled: \(event)")
    }
    persistLocalData()
  }

  /// A fetched version: a row with a change not yet sent keeps its fields.
  func merge(_ record: SyncRecord, syncEngine: SyncEngine) {
    let pending = syncEngine.state.pendingRecordZoneChanges
    if pending.contains(.deleteRecord(record.recordID)) { return }
    var row = appData.rows[record.recordID.recordName] ?? AppData.Row(type: record.recordType, fields: [:])
    if !pending.contains(.saveRecord(record.recordID)) {
      row.fields = Dictionary(record.allKeys().compactMap { key in record[key].map { (key, $0.syncValue) } }) { $1 }
    }
    row.system = record.encodedSystemFields
    appData.rows[record.recordID.recordName] = row
  }

  func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async -> SyncEngine.RecordZoneChangeBatch? {
    let changes = syncEngine.state.pendingRecordZoneChanges.filter { context.options.scope.contains($0) }
    let rows = appData.rows
    return await SyncEngine.RecordZoneChangeBatch(pendingChanges: changes) { recordID in
      guard let row = rows[recordID.recordName] else { return nil }
      let record = row.system.flatMap { SyncRecord(systemFields: $0) } ?? SyncRecord(recordType: row.type, recordID: recordID)
      for (field, value) in row.fields { record[field] = value }
      return record
    }
  }
}
