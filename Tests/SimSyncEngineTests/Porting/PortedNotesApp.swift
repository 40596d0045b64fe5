import Foundation
import SimSyncEngine

/// Where the notes live: on the simulated device's disk (in the app, a file or a database).
final class NoteStore {
  let disk: SimDisk
  var notes: [String: Note] = [:]
  var stateSerialization: SyncEngine.State.Serialization?

  init(disk: SimDisk) {
    self.disk = disk
    if let data = disk["notes.json"], let saved = try? JSONDecoder().decode(Saved.self, from: data) {
      notes = saved.notes
      stateSerialization = saved.state
    }
  }

  struct Saved: Codable {
    var notes: [String: Note]
    var state: SyncEngine.State.Serialization?
  }

  /// Writes everything (sorted keys: the same notes give the same bytes in every run).
  func save() {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    disk["notes.json"] = try? encoder.encode(Saved(notes: notes, state: stateSerialization))
  }

  func removeAll() {
    notes = [:]
    save()
  }
}

/// The app around the delegate, as the simulator launches it on each device.
final class PortedNotesApp: SimApp {
  let device: SimDevice
  let store: NoteStore
  let delegate: NotesSyncDelegate
  let syncEngine: SyncEngine

  init(device: SimDevice) {
    self.device = device
    store = NoteStore(disk: device.disk)
    delegate = NotesSyncDelegate(store: store)
    syncEngine = SyncEngine(.init(database: device.database, stateSerialization: store.stateSerialization, delegate: delegate))
  }

  /// The user's change: into the store, then a pending change for the engine.
  func perform(_ intent: AppIntent) -> Bool {
    switch intent {
    case .create(_, let recordID, let values):
      store.notes[recordID.recordName] = Note()
      edit(recordID, values)
    case .set(let recordID, let values):
      guard store.notes[recordID.recordName] != nil else { return false }
      edit(recordID, values)
    case .delete(let recordID):
      guard store.notes[recordID.recordName] != nil else { return false }
      store.notes[recordID.recordName] = nil
      syncEngine.state.add(pendingRecordZoneChanges: [.deleteRecord(recordID)])
    case .append(let recordID, let field, let text):
      guard var note = store.notes[recordID.recordName], field == "body" else { return false }
      (note.body, note.bodyEdited) = (note.body + text, true)
      store.notes[recordID.recordName] = note
      syncEngine.state.add(pendingRecordZoneChanges: [.saveRecord(recordID)])
    case .deleteZone:
      store.notes = [:]
      syncEngine.state.remove(pendingRecordZoneChanges: syncEngine.state.pendingRecordZoneChanges)
    }
    store.stateSerialization = syncEngine.state.serialization
    store.save()
    return true
  }

  func edit(_ recordID: SyncRecordID, _ values: [(field: String, value: SyncValue)]) {
    var note = store.notes[recordID.recordName] ?? Note()
    for (field, value) in values {
      guard case .string(let text) = value else { continue }
      if field == "title" { (note.title, note.titleEdited) = (text, true) }
      if field == "tag" { (note.tag, note.tagEdited) = (text, true) }
      if field == "body" { (note.body, note.bodyEdited) = (text, true) }
    }
    store.notes[recordID.recordName] = note
    syncEngine.state.add(pendingRecordZoneChanges: [.saveRecord(recordID)])
  }

  /// What the user sees: one record per note.
  func shownRecords() -> [SyncRecord] {
    store.notes.keys.sorted().map { name in
      let note = store.notes[name]!
      let record = SyncRecord(recordType: "Note", recordID: SyncRecordID(recordName: name, zoneID: device.zoneID))
      record["title"] = note.title
      record["tag"] = note.tag
      record["body"] = note.body
      return record
    }
  }
}
