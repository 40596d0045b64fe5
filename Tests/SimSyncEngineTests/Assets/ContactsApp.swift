import Foundation
import SimSyncEngine

/// A contacts app whose phone numbers are encrypted (`phone: string? encrypted`): it writes and
/// reads them through `record.encryptedValues`, as one does with CloudKit, and its other fields
/// through the record's subscript. Sends whole records; on a conflict takes the server's record
/// and sends its own edits again.
class ContactsApp: SimApp, SyncEngineDelegate, @unchecked Sendable {
  class var schema: AppSchema {
    AppSchema(
      """
      type Contact
        name: string = "" mutable
        phone: string? mutable encrypted
      """)
  }

  struct Row: Codable, Equatable {
    var name = ""
    var phone: String?
    /// The fields edited here and not yet saved, sorted (a `Set` would encode in a different
    /// order in every run).
    var dirty: [String] = []
    var systemFields: Data?
  }

  let device: SimDevice
  var rows: [String: Row] = [:]
  var engine: SyncEngine!
  var syncEngine: SyncEngine { engine }

  required init(device: SimDevice) {
    self.device = device
    var state: SyncEngine.State.Serialization?
    if let data = device.disk["state"] { state = try? JSONDecoder().decode(SyncEngine.State.Serialization.self, from: data) }
    if let data = device.disk["rows"], let saved = try? JSONDecoder().decode([String: Row].self, from: data) { rows = saved }
    engine = SyncEngine(.init(database: device.database, stateSerialization: state, delegate: self))
  }

  func save(_ state: SyncEngine.State.Serialization? = nil) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    device.disk["rows"] = try? encoder.encode(rows)
    device.disk["state"] = try? encoder.encode(state ?? engine.state.serialization)
  }

  func perform(_ intent: AppIntent) -> Bool {
    switch intent {
    case .create(_, let id, let values):
      rows[id.recordName] = Row()
      edit(id, values)
    case .set(let id, let values):
      guard rows[id.recordName] != nil else { return false }
      edit(id, values)
    case .delete(let id):
      guard rows[id.recordName] != nil else { return false }
      rows[id.recordName] = nil
      engine.state.add(pendingRecordZoneChanges: [.deleteRecord(id)])
    default:
      return false
    }
    save()
    return true
  }

  func edit(_ id: SyncRecordID, _ values: [(field: String, value: SyncValue)]) {
    var row = rows[id.recordName]!
    for (field, value) in values {
      if field == "name" { row.name = value.natural as? String ?? "" }
      if field == "phone" { row.phone = value.natural as? String }
      if !row.dirty.contains(field) { row.dirty = (row.dirty + [field]).sorted() }
    }
    rows[id.recordName] = row
    engine.state.add(pendingRecordZoneChanges: [.saveRecord(id)])
  }

  func shownRecords() -> [SyncRecord] {
    rows.keys.sorted().map { name in
      let row = rows[name]!
      let record = SyncRecord(recordType: "Contact", recordID: SyncRecordID(recordName: name, zoneID: device.zoneID))
      record["name"] = row.name
      record.encryptedValues["phone"] = row.phone
      return record
    }
  }

  /// Writes the contact's fields into `record`: the phone number encrypted.
  func fill(_ record: SyncRecord, from row: Row) {
    record["name"] = row.name
    record.encryptedValues["phone"] = row.phone
  }

  /// Reads a record from the server into `row`, but the fields edited here.
  func read(_ record: SyncRecord, into row: inout Row) {
    if !row.dirty.contains("name") { row.name = record["name"] as? String ?? "" }
    if !row.dirty.contains("phone") { row.phone = record.encryptedValues["phone"] as? String }
  }

  func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
    switch event {
    case .stateUpdate(let update):
      save(update.stateSerialization)
      return
    case .fetchedRecordZoneChanges(let changes):
      for m in changes.modifications {
        var row = rows[m.record.recordID.recordName] ?? Row()
        read(m.record, into: &row)
        row.systemFields = m.record.encodedSystemFields
        rows[m.record.recordID.recordName] = row
      }
      for d in changes.deletions { rows[d.recordID.recordName] = nil }
    case .sentRecordZoneChanges(let sent):
      for record in sent.savedRecords {
        rows[record.recordID.recordName]?.systemFields = record.encodedSystemFields
        if !syncEngine.state.pendingRecordZoneChanges.contains(.saveRecord(record.recordID)) { rows[record.recordID.recordName]?.dirty = [] }
      }
      for failure in sent.failedRecordSaves where failure.error.code == .serverRecordChanged {
        guard let server = failure.error.serverRecord, var row = rows[server.recordID.recordName] else { continue }
        read(server, into: &row)
        row.systemFields = server.encodedSystemFields
        rows[server.recordID.recordName] = row
        syncEngine.state.add(pendingRecordZoneChanges: [.saveRecord(server.recordID)])
      }
    default:
      break
    }
    save()
  }

  func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async -> SyncEngine.RecordZoneChangeBatch? {
    await SyncEngine.RecordZoneChangeBatch(pendingChanges: syncEngine.state.pendingRecordZoneChanges) { id in
      guard let row = self.rows[id.recordName] else { return nil }
      let record = row.systemFields.flatMap { SyncRecord(systemFields: $0) } ?? SyncRecord(recordType: "Contact", recordID: id)
      self.fill(record, from: row)
      return record
    }
  }
}

/// Planted: a port that writes the encrypted phone number through `record["phone"]`, as it wrote
/// it before the field was encrypted.
final class ContactsAppWritingPhonesInTheClear: ContactsApp, @unchecked Sendable {
  override func fill(_ record: SyncRecord, from row: Row) {
    record["name"] = row.name
    record["phone"] = row.phone
  }
}

/// Also keeps a field the schema does not declare among the record's `encryptedValues` (a
/// private nickname): CloudKit hands it back there. Were it handed back among the plain fields,
/// this app would take it for a record another app wrote in the clear and blank the name — a
/// phantom value the oracle reports.
final class ContactsAppWithAPrivateNickname: ContactsApp, @unchecked Sendable {
  override func fill(_ record: SyncRecord, from row: Row) {
    super.fill(record, from: row)
    record.encryptedValues["nickname"] = "nick-" + row.name
  }

  override func read(_ record: SyncRecord, into row: inout Row) {
    super.read(record, into: &row)
    if record["nickname"] != nil || record.encryptedValues["nickname"] == nil { row.name = "" }
  }
}
