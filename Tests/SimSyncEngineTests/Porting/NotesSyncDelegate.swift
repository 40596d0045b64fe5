import Foundation
import SimSyncEngine

/// A note as the app keeps it: the user's fields, whether each was edited here and not yet
/// saved, and the system fields of the last version the server confirmed.
struct Note: Codable {
  var title = ""
  var tag = ""
  var body = ""
  var titleEdited = false
  var tagEdited = false
  var bodyEdited = false
  var systemFields: Data?
}

/// The app's sync code: the engine's delegate. It merges fetched records field by field, keeps
/// edits the server has not confirmed, and answers a conflict by merging and sending again.
final class NotesSyncDelegate: SyncEngineDelegate, @unchecked Sendable {
  let store: NoteStore

  init(store: NoteStore) {
    self.store = store
  }

  func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
    switch event {
    case .stateUpdate(let update):
      store.stateSerialization = update.stateSerialization
    case .accountChange(let change):
      if case .signIn = change.changeType {} else { store.removeAll() }
    case .fetchedRecordZoneChanges(let changes):
      for modification in changes.modifications { merge(modification.record, syncEngine: syncEngine) }
      for deletion in changes.deletions { removeNote(deletion.recordID, syncEngine: syncEngine) }
    case .sentRecordZoneChanges(let sent):
      for record in sent.savedRecords { saved(record, syncEngine: syncEngine) }
      for failure in sent.failedRecordSaves { failed(failure.record, failure.error, syncEngine: syncEngine) }
    default:
      break
    }
    store.save()
  }

  func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async
    -> SyncEngine.RecordZoneChangeBatch?
  {
    let changes = syncEngine.state.pendingRecordZoneChanges.filter { context.options.scope.contains($0) }
    return await SyncEngine.RecordZoneChangeBatch(pendingChanges: changes) { recordID in
      self.record(for: recordID)
    }
  }

  /// The record to save: the last confirmed version's system fields, with the note's fields.
  func record(for recordID: SyncRecordID) -> SyncRecord? {
    guard let note = store.notes[recordID.recordName] else { return nil }
    let record =
      note.systemFields.flatMap { SyncRecord(systemFields: $0) } ?? SyncRecord(recordType: "Note", recordID: recordID)
    record["title"] = note.title
    record["tag"] = note.tag
    record["body"] = note.body
    return record
  }

  /// A version from the server: fields edited here and not yet saved stay, the others take the
  /// server's values. A note deleted here, whose delete is not sent yet, stays deleted.
  func merge(_ record: SyncRecord, syncEngine: SyncEngine) {
    if syncEngine.state.pendingRecordZoneChanges.contains(.deleteRecord(record.recordID)) { return }
    var note = store.notes[record.recordID.recordName] ?? Note()
    if !note.titleEdited { note.title = record["title"] as? String ?? "" }
    if !note.tagEdited { note.tag = record["tag"] as? String ?? "" }
    if !note.bodyEdited { note.body = record["body"] as? String ?? "" }
    note.systemFields = record.encodedSystemFields
    store.notes[record.recordID.recordName] = note
  }

  /// A save went through: the note is clean, unless it was edited again while the batch was out
  /// (the engine then has the change pending still).
  func saved(_ record: SyncRecord, syncEngine: SyncEngine) {
    guard var note = store.notes[record.recordID.recordName] else { return }
    note.systemFields = record.encodedSystemFields
    if !syncEngine.state.pendingRecordZoneChanges.contains(.saveRecord(record.recordID)) {
      note.titleEdited = false
      note.tagEdited = false
      note.bodyEdited = false
    }
    store.notes[record.recordID.recordName] = note
  }

  /// A save failed: on a conflict, merge with the server's version and send again; a note
  /// deleted elsewhere goes; transient errors stay pending, and the engine retries them.
  func failed(_ record: SyncRecord, _ error: SyncError, syncEngine: SyncEngine) {
    switch error.code {
    case .serverRecordChanged:
      if let server = error.serverRecord { merge(server, syncEngine: syncEngine) }
      syncEngine.state.add(pendingRecordZoneChanges: [.saveRecord(record.recordID)])
    case .unknownItem:
      removeNote(record.recordID, syncEngine: syncEngine)
    default:
      break
    }
  }

  /// A note deleted elsewhere: it goes, and so does an unsent save of it.
  func removeNote(_ recordID: SyncRecordID, syncEngine: SyncEngine) {
    store.notes[recordID.recordName] = nil
    syncEngine.state.remove(pendingRecordZoneChanges: [.saveRecord(recordID)])
  }
}
