@_spi(Kernel) import Simulator

/// The device's asset files (issue 33): the app's own copies of the assets it wrote or copied
/// from a fetch, and the fetched ones still in the staging area. A file is known by its
/// content's name (``Content/name``), never by its bytes.
extension DeviceState {
  /// Where a device keeps an asset's file.
  package enum AssetFile: UInt8, Hashable, Sendable {
    /// In the app's own container: it stays until the app deletes it.
    case own
    /// In the staging area CloudKit fetched it into (Apple, `CKAsset`): the system may purge it.
    case staged
  }

  /// Why a file went from the device.
  package enum FileLoss: UInt8, Hashable, Sendable {
    /// The app deleted it (`delete-file`).
    case deletedByApp
    /// The system purged the staging area it was in (`purge-staging`).
    case stagingPurged
  }

  /// Whether this device holds the file of `content`: an asset with data whose file it has.
  package func holdsFile(of content: Content) -> Bool {
    content.hasData && files[content.name] != nil
  }

  /// The app wrote these values: the files of the assets among them are its own.
  mutating func keepOwnFiles(_ values: [FieldWrite]) {
    for w in values {
      guard case .content(let c) = w.value, c.isAsset else { continue }
      files[c.name] = .own
      if !fileChanges.isEmpty { fileChanges[c.name] = nil }
      if !uploadCopiesGone.isEmpty { uploadCopiesGone.remove(c.name) }
    }
  }

  /// A copy of a record came from the server with its assets: each file lands in the staging
  /// area, and is copied into the app's files at once under `fetched-assets=copy`.
  mutating func receiveFiles(of record: RecordState, env: DeviceEnvironment) {
    guard !record.isDeleted else { return }
    for f in env.context.rules.assetFields[Int(record.type)] {
      guard case .content(let c) = record.fields[Int(f)].value, c.isAsset, c.hasData, files[c.name] != .own else { continue }
      files[c.name] = env.settings.fetchedAssets == .copy ? .own : .staged
    }
  }

  /// The request in flight moves `transfer` worth of asset bytes over the device's link: its
  /// timeout counts from when they are through (an upload in progress does not time out).
  package mutating func extendTimeout(by transfer: SimDuration, effects: inout [DeviceEffect]) {
    switch phase {
    case .pushing, .fetching:
      effects.append(.timer(.timeout, after: config.requestTimeout + transfer, generation: _bump(.timeout)))
    default: break
    }
  }

  /// The system purges the staging area: every staged file goes. Returns how many went.
  package mutating func purgeStaging(at now: VirtualTime) -> Int {
    let staged = files.filter { $0.value == .staged }.map(\.key)
    for name in staged {
      files[name] = nil
      lostFiles[name] = (.stagingPurged, now)
    }
    return staged.count
  }

  /// The asset a field of the record this device shows refers to, if any.
  package func asset(of key: RecordKey, field: Int) -> Content? {
    guard let r = store.live(key), field < r.fields.count, case .content(let c) = r.fields[field].value, c.isAsset else { return nil }
    return c
  }

  /// The app deletes the file of the asset `key.field` refers to here. Returns its name (nil:
  /// the field holds no asset on this device, or its file is not here).
  package mutating func deleteFile(of key: RecordKey, field: Int, at now: VirtualTime) -> String? {
    guard let c = asset(of: key, field: field), files[c.name] != nil else { return nil }
    files[c.name] = nil
    lostFiles[c.name] = (.deletedByApp, now)
    return c.name
  }

  /// The app changes the file of the asset `key.field` refers to, in place, at `now`. Returns its
  /// name (nil: no such file here).
  package mutating func changeFile(of key: RecordKey, field: Int, at now: VirtualTime) -> String? {
    guard let c = asset(of: key, field: field), files[c.name] != nil else { return nil }
    fileChanges[c.name] = now
    return c.name
  }

  /// What an upload of `write`'s assets finds when it reads their files while the request
  /// travels (sent at ``pushSentAt``): a missing file (`assetFileNotFound`), or one changed since
  /// the request was sent (`assetFileModified`); nil when every file it reads is there as it was.
  /// Only the asset fields the write changed are uploaded (CloudKit uploads a record's changed
  /// keys), an asset the server's copy (`server`) already holds is not uploaded again, and an
  /// asset without data uploads nothing.
  package func uploadProblem(_ write: RecordWrite, server: RecordState?, rules: SchemaRules) -> CloudKitError? {
    guard !write.isDelete else { return nil }
    var problem: CloudKitError?
    for f in rules.assetFields[Int(write.record.type)] where write.changed.contains(.field(Int(f))) {
      guard case .content(let c) = write.record.fields[Int(f)].value, c.isAsset, c.hasData else { continue }
      if let server, !server.isDeleted, Int(f) < server.fields.count, server.fields[Int(f)].value == .content(c) { continue }
      if files[c.name] == nil || uploadCopiesGone.contains(c.name) { return .assetFileNotFound }
      if let changed = fileChanges[c.name], changed >= pushSentAt { problem = .assetFileModified }
    }
    return problem
  }

  /// `asset-file=delete-after-send`: the request that carried these uploads ended unconfirmed,
  /// and the engine deletes their upload files anyway.
  mutating func dropUploadCopies(of entry: OutboxEntry, env: DeviceEnvironment) {
    guard let r = store[entry.key], !r.isDeleted else { return }
    for f in env.context.rules.assetFields[Int(r.type)] where entry.sent.contains(.field(Int(f))) {
      if case .content(let c) = r.fields[Int(f)].value, c.isAsset, c.hasData { uploadCopiesGone.insert(c.name) }
    }
  }

  /// A copy of `record` whose assets carry no data.
  static func withoutAssetData(_ record: RecordState, _ rules: SchemaRules) -> RecordState {
    var r = record
    for f in rules.assetFields[Int(r.type)] {
      if case .content(var c) = r.fields[Int(f)].value, c.isAsset {
        c.hasData = false
        r.fields[Int(f)].value = .content(c)
      }
    }
    return r
  }
}
