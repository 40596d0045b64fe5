import Foundation
import SimSyncEngine

/// A photo as the app keeps it: its caption and image (a `SyncAsset` of a file in the app's
/// container), whether each was edited here and not yet saved, and the system fields of the last
/// version the server confirmed.
struct PhotoRow: Codable, Equatable {
  var caption = ""
  var image: SyncAsset?
  var captionEdited = false
  var imageEdited = false
  var systemFields: Data?
}

/// A photos app on the asset schema, written as one writes it on `CKSyncEngine` with `CKAsset`
/// (renamed `SyncAsset`): a fetched photo's file is copied out of the staging area into the app's
/// container in the fetch's delegate call; a save refused with `serverRecordChanged` is merged —
/// never taking an asset from the error's server record, whose `fileURL` is nil — and sent again
/// with only the fields edited here; a save whose file changed while it uploaded
/// (`assetFileModified`) is sent again, one whose file is gone (`assetFileNotFound`) is not.
///
/// The planted apps below each get one of these wrong.
class PhotosApp: SimApp, SyncEngineDelegate, @unchecked Sendable {
  class var schema: AppSchema {
    AppSchema(
      """
      type Photo
        caption: string = "" mutable
        image: asset? mutable
      """)
  }

  struct Saved: Codable {
    var photos: [String: PhotoRow]
    var state: SyncEngine.State.Serialization?
  }

  let device: SimDevice
  var photos: [String: PhotoRow] = [:]
  var state: SyncEngine.State.Serialization?
  var engine: SyncEngine!
  var syncEngine: SyncEngine { engine }
  /// The errors of failed saves this launch saw, in order (for the tests).
  var errorsSeen: [SyncError.Code] = []

  required init(device: SimDevice) {
    self.device = device
    if let data = device.disk["photos.json"], let saved = try? JSONDecoder().decode(Saved.self, from: data) {
      photos = saved.photos
      state = saved.state
    }
    engine = SyncEngine(.init(database: device.database, stateSerialization: state, delegate: self))
  }

  /// Writes everything (sorted keys: the same photos give the same bytes in every run).
  func save() {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    device.disk["photos.json"] = try? encoder.encode(Saved(photos: photos, state: state))
  }

  func id(_ name: String) -> SyncRecordID { SyncRecordID(recordName: name, zoneID: device.zoneID) }

  // MARK: The user's changes

  func perform(_ intent: AppIntent) -> Bool {
    switch intent {
    case .create(_, let recordID, let values):
      photos[recordID.recordName] = PhotoRow()
      edit(recordID, values)
    case .set(let recordID, let values):
      guard photos[recordID.recordName] != nil else { return false }
      edit(recordID, values)
    case .delete(let recordID):
      guard photos[recordID.recordName] != nil else { return false }
      photos[recordID.recordName] = nil
      engine.state.add(pendingRecordZoneChanges: [.deleteRecord(recordID)])
    case .append:
      return false
    case .deleteZone:
      photos = [:]
      engine.state.remove(pendingRecordZoneChanges: engine.state.pendingRecordZoneChanges)
    }
    state = engine.state.serialization
    save()
    return true
  }

  /// The user's values: the caption, and the photo they picked (a file the system put in the
  /// app's container).
  func edit(_ recordID: SyncRecordID, _ values: [(field: String, value: SyncValue)]) {
    var row = photos[recordID.recordName] ?? PhotoRow()
    for (field, value) in values {
      if field == "caption" { (row.caption, row.captionEdited) = (value.natural as? String ?? "", true) }
      if field == "image" { (row.image, row.imageEdited) = (value.natural as? SyncAsset, true) }
    }
    photos[recordID.recordName] = row
    engine.state.add(pendingRecordZoneChanges: [.saveRecord(recordID)])
  }

  func shownRecords() -> [SyncRecord] {
    photos.keys.sorted().map { name in
      let row = photos[name]!
      let record = SyncRecord(recordType: "Photo", recordID: id(name))
      record["caption"] = row.caption
      record["image"] = row.image
      return record
    }
  }

  // MARK: The delegate

  func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
    switch event {
    case .stateUpdate(let update):
      state = update.stateSerialization
    case .fetchedRecordZoneChanges(let changes):
      for modification in changes.modifications { merge(modification.record, syncEngine: syncEngine) }
      for deletion in changes.deletions {
        photos[deletion.recordID.recordName] = nil
        syncEngine.state.remove(pendingRecordZoneChanges: [.saveRecord(deletion.recordID)])
      }
    case .sentRecordZoneChanges(let sent):
      for record in sent.savedRecords { saved(record, syncEngine: syncEngine) }
      for failure in sent.failedRecordSaves { failed(failure.record, failure.error, syncEngine: syncEngine) }
    default:
      break
    }
    save()
  }

  func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async -> SyncEngine.RecordZoneChangeBatch? {
    let changes = syncEngine.state.pendingRecordZoneChanges.filter { context.options.scope.contains($0) }
    return await SyncEngine.RecordZoneChangeBatch(pendingChanges: changes) { recordID in self.record(for: recordID) }
  }

  /// The record to save: the last confirmed version's system fields, with the fields edited here
  /// (all of them for a photo never saved). A field left out keeps the server's value.
  func record(for recordID: SyncRecordID) -> SyncRecord? {
    guard let row = photos[recordID.recordName] else { return nil }
    let record = row.systemFields.flatMap { SyncRecord(systemFields: $0) } ?? SyncRecord(recordType: "Photo", recordID: recordID)
    if row.captionEdited || row.systemFields == nil { record["caption"] = row.caption }
    if row.imageEdited || row.systemFields == nil { record["image"] = row.image }
    return record
  }

  /// A version from the server: fields edited here and not yet saved stay, the others take the
  /// server's values — its photo copied out of the staging area (``keep(_:instead:)``).
  func merge(_ record: SyncRecord, syncEngine: SyncEngine) {
    if syncEngine.state.pendingRecordZoneChanges.contains(.deleteRecord(record.recordID)) { return }
    var row = photos[record.recordID.recordName] ?? PhotoRow()
    if !row.captionEdited { row.caption = record["caption"] as? String ?? "" }
    if !row.imageEdited { row.image = keep(record["image"] as? SyncAsset, instead: row.image) }
    row.systemFields = record.encodedSystemFields
    photos[record.recordID.recordName] = row
  }

  /// The photo to keep of a record from the server: its file copied into the app's container
  /// (Apple, `CKAsset`: "move the data into your app's container as soon as you fetch it"). An
  /// asset with no file — the server record of `serverRecordChanged`, whose assets CloudKit does
  /// not download — is not kept: the photo stays as it was until a fetch brings the file.
  func keep(_ asset: SyncAsset?, instead current: SyncAsset?) -> SyncAsset? {
    guard let asset else { return nil }
    guard let staged = asset.fileURL else { return current }
    let mine = device.files.containerURL.appendingPathComponent("photos").appendingPathComponent(staged.lastPathComponent)
    if !device.files.fileExists(at: mine) {
      do { try device.files.copyItem(at: staged, to: mine) } catch { return current }
    }
    return SyncAsset(fileURL: mine)
  }

  /// A save went through: the photo is clean, unless it was edited again while the batch was out.
  func saved(_ record: SyncRecord, syncEngine: SyncEngine) {
    guard var row = photos[record.recordID.recordName] else { return }
    row.systemFields = record.encodedSystemFields
    if !syncEngine.state.pendingRecordZoneChanges.contains(.saveRecord(record.recordID)) {
      row.captionEdited = false
      row.imageEdited = false
    }
    photos[record.recordID.recordName] = row
  }

  /// A save failed: on a conflict, merge with the server's record and send again; a photo
  /// deleted elsewhere goes; a file changed while it uploaded is sent again; a file that is gone
  /// cannot be (the photo stays edited, unsent).
  func failed(_ record: SyncRecord, _ error: SyncError, syncEngine: SyncEngine) {
    errorsSeen.append(error.code)
    switch error.code {
    case .serverRecordChanged:
      if let server = error.serverRecord { resolveConflict(server, syncEngine: syncEngine) }
      syncEngine.state.add(pendingRecordZoneChanges: [.saveRecord(record.recordID)])
    case .unknownItem:
      photos[record.recordID.recordName] = nil
    case .assetFileNotFound, .serverRejectedRequest, .limitExceeded:
      break
    default:
      if !error.code.isRetriedByTheEngine, photos[record.recordID.recordName] != nil {
        syncEngine.state.add(pendingRecordZoneChanges: [.saveRecord(record.recordID)])
      }
    }
  }

  /// `serverRecordChanged`: the server's record merged in, as a fetched one is.
  func resolveConflict(_ server: SyncRecord, syncEngine: SyncEngine) { merge(server, syncEngine: syncEngine) }
}

/// Planted (Apple's staging note; BisonNotes-AI #124): shows a fetched photo from the staging
/// area instead of copying its file — the system purges it, and the photo is gone.
final class PhotosAppKeepingStagingURLs: PhotosApp, @unchecked Sendable {
  override func keep(_ asset: SyncAsset?, instead current: SyncAsset?) -> SyncAsset? {
    guard let asset else { return nil }
    return asset.fileURL == nil ? current : asset
  }
}

/// Planted (`CKAsset.fileURL` is nil in `serverRecordChanged`'s record): the conflict handler
/// takes every field of the server's record it did not edit — the photo too, whose file CloudKit
/// did not download — and saves them with its own edit: the photo is replaced by nothing.
final class PhotosAppMergingServerAssets: PhotosApp, @unchecked Sendable {
  /// (And takes a record's photo as it comes, file or no file.)
  override func keep(_ asset: SyncAsset?, instead current: SyncAsset?) -> SyncAsset? {
    asset?.fileURL == nil ? asset : super.keep(asset, instead: current)
  }

  override func resolveConflict(_ server: SyncRecord, syncEngine: SyncEngine) {
    guard var row = photos[server.recordID.recordName] else { return }
    if !row.captionEdited { (row.caption, row.captionEdited) = (server["caption"] as? String ?? "", true) }
    if !row.imageEdited { (row.image, row.imageEdited) = (server["image"] as? SyncAsset, true) }
    row.systemFields = server.encodedSystemFields
    photos[server.recordID.recordName] = row
  }
}
