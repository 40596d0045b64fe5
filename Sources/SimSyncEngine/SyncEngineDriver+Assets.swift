import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// Assets and encrypted fields (issue 33): the device's files as the app keeps them
/// (``SimFiles``), the world's view of them (``DeviceState/files``), what a record the engine
/// hands over carries, and the accessor each field is written through.
extension SyncEngineDriver {
  /// How the assets of a record the engine hands to the app come.
  enum AssetDelivery {
    /// Fetched: each file is in the staging area (Apple, `CKAsset`), its URL the asset's.
    case fetched
    /// The record of a save that went through: an asset the record sent is that one; any other
    /// is the device's own file, or lands in staging as a fetched one does.
    case saved(SyncRecord)
    /// The server record of `serverRecordChanged`: CloudKit does not download its assets, and
    /// each `fileURL` is nil (Apple, `CKAsset.fileURL`).
    case withoutData
  }

  /// Whether the scenario's schema has an `asset` field (the device keeps files only then).
  var hasAssets: Bool { !assetFields.isEmpty }

  /// A value the world holds, as the engine hands it to the app: an asset as a ``SyncAsset``
  /// (`delivery` says where its file is), inline bytes of a size as a stand-in (below), any other
  /// as ``syncValue(_:)`` makes it.
  func appValue(_ v: Value, field: String, delivery: AssetDelivery) -> SyncValue {
    guard case .content(let c) = v else { return syncValue(v) }
    guard c.isAsset else { return .data(SizedBytes.standIn(c)) }
    let content = AssetContent(name: c.name, size: c.size)
    guard c.hasData else { return .asset(SyncAsset(fileURL: nil, content: content)) }
    switch delivery {
    case .fetched:
      return .asset(SyncAsset(fileURL: files.stagedURL(content), content: content))
    case .withoutData:
      return .asset(SyncAsset(fileURL: nil, content: content))
    case .saved(let sent):
      if case .asset(let a)? = sent.fields[field], a.fileURL != nil, assetContent(a) == content { return .asset(a) }
      return .asset(SyncAsset(fileURL: files.ownURL(of: c.name) ?? files.stagedURL(content), content: content))
    }
  }

  /// The value of an intent, as the app is given it: an asset the user picked is a file put in
  /// the app's container (`sim://DEVICE/container/NAME`), as the app would have written it.
  func intentValue(_ v: Value) -> SyncValue {
    guard case .content(let c) = v, c.isAsset, c.hasData else { return appValue(v, field: "", delivery: .withoutData) }
    let content = AssetContent(name: c.name, size: c.size)
    return .asset(SyncAsset(fileURL: files.place(content), content: content))
  }

  /// The content an asset the app holds refers to: the one it was made with, else that of its
  /// file (or of the last file at its URL); for a URL that never held a file, its last path
  /// component, of no size.
  func assetContent(_ a: SyncAsset) -> AssetContent {
    if let content = a.content { return content }
    guard let url = a.fileURL else { return AssetContent(name: "", size: 0) }
    return files.content(at: url) ?? AssetContent(name: url.lastPathComponent, size: 0)
  }

  /// An asset the app holds, as the world holds it: content with data unless its `fileURL` is nil.
  func simAsset(_ a: SyncAsset) -> Value {
    let c = assetContent(a)
    return .content(Content(name: c.name, size: c.size, isAsset: true, hasData: a.fileURL != nil))
  }

  /// The device took in `copy` from the server: a fetched copy's assets land in the staging area
  /// (each time: CloudKit downloads them for every fetch), a saved copy's assets the device does
  /// not hold too; the copy the world is told of has no asset data when the server record came
  /// without it (``AssetDelivery/withoutData``).
  func stageAssets(of copy: RecordState, delivery: AssetDelivery) -> RecordState {
    guard !copy.isDeleted, Int(copy.type) < assetFields.count, !assetFields[Int(copy.type)].isEmpty else { return copy }
    var told = copy
    var holdings: [String: SimFiles.Holding]?
    for f in assetFields[Int(copy.type)] {
      guard f < copy.fields.count, case .content(var c) = copy.fields[f].value, c.isAsset, c.hasData else { continue }
      switch delivery {
      case .fetched:
        _ = files.stage(AssetContent(name: c.name, size: c.size))
      case .saved:
        if holdings == nil { holdings = files.holdings() }
        if holdings?[c.name]?.own != true { _ = files.stage(AssetContent(name: c.name, size: c.size)) }
      case .withoutData:
        c.hasData = false
        told.fields[f].value = .content(c)
      }
    }
    return told
  }

  /// After a step: the world's view of the device's files (``DeviceState/files``) is set from
  /// the app's, for each content whose files changed — reported as raw observations.
  func syncFiles(_ view: inout DeviceState, env: DeviceEnvironment, effects: inout [DeviceEffect]) {
    guard files.version != toldFilesVersion else { return }
    toldFilesVersion = files.version
    let now = files.holdings()
    for name in Set(now.keys).union(toldFiles.keys).sorted() {
      let held = now[name] ?? SimFiles.Holding()
      guard held != toldFiles[name] ?? SimFiles.Holding() else { continue }
      view.driverSetFile(name, own: held.own, staged: held.staged, at: env.now, effects: &effects)
    }
    toldFiles = now
  }

  /// The world purged the staging area, or the user deleted a file (every copy of it): the app's
  /// files follow. (The world has changed its view and observed it already.)
  package func filesChangedByTheWorld(stagingPurged: Bool, deleted name: String?) {
    if stagingPurged { files.purgeStaging() }
    if let name { files.deleteAll(named: name) }
    toldFiles = files.holdings()
    toldFilesVersion = files.version
  }

  // MARK: Encrypted fields

  /// Whether field `spec` is one of a record's `encryptedValues`: marked `encrypted` in the
  /// schema, and of a kind CloudKit encrypts (an asset is encrypted by default and a reference
  /// never: neither goes in `encryptedValues`, Apple, `CKRecord.encryptedValues`). Only for an
  /// app that states its schema: one that takes any types cannot know which fields are.
  func isEncrypted(_ spec: FieldSpec) -> Bool {
    guard spec.encrypted, provenance.appStatesSchema else { return false }
    switch spec.kind {
    case .asset, .ref: return false
    default: return true
    }
  }

  /// Why `record` (of schema type `type`) is not what the schema says of its encrypted fields —
  /// a field set through the record's subscript that the schema marks `encrypted`, or one set
  /// through `encryptedValues` that it does not — or nil when it is.
  func encryptionMismatch(_ record: SyncRecord, type: Int) -> String? {
    guard provenance.appStatesSchema else { return nil }
    let spec = schema.types[type]
    for field in spec.fields where record.fields[field.name] != nil {
      let viaEncrypted = record.encrypted.contains(field.name)
      let encrypted = isEncrypted(field)
      guard viaEncrypted != encrypted else { continue }
      let what = "\(record.recordType) \(record.recordID.recordName) was sent with its field \(field.name)"
      if encrypted {
        return
          "\(what) set through record[\"\(field.name)\"], and the schema marks it encrypted (\(field.name): \(field.kind) encrypted): CloudKit keeps a record's encrypted values apart from its others, so an encrypted field is written (and read) through record.encryptedValues[\"\(field.name)\"] (CKRecord.encryptedValues)"
      }
      if field.kind == .asset || field.referencedType != nil {
        return
          "\(what) set through record.encryptedValues[\"\(field.name)\"]: CloudKit encrypts an asset by default and never a reference, and neither goes in encryptedValues (Apple, CKRecord.encryptedValues); write it through record[\"\(field.name)\"]"
      }
      return
        "\(what) set through record.encryptedValues[\"\(field.name)\"], and the schema does not mark it encrypted: write it through record[\"\(field.name)\"], or mark it `encrypted` in the schema (CloudKit encrypts only fields that are new to the schema, Apple, CKRecord.encryptedValues)"
    }
    return nil
  }
}

/// Inline bytes given by size (`bytes("body-v3", 900KB)`) reach the app as a few bytes that
/// stand for them (the megabyte is never made), and come back as that value when the app stores
/// or sends them.
enum SizedBytes {
  static let mark = Array("\u{1}sim-sized-bytes:".utf8)

  /// The stand-in of `c`.
  static func standIn(_ c: Content) -> Data { Data(mark + Array("\(c.size):\(c.name)".utf8)) }

  /// The value a stand-in stands for, or nil for any other bytes.
  static func content(_ d: Data) -> Value? {
    guard d.count > mark.count, d.prefix(mark.count).elementsEqual(mark), let text = String(data: d.dropFirst(mark.count), encoding: .utf8),
      let colon = text.firstIndex(of: ":"), let size = Int64(text[..<colon])
    else { return nil }
    return .content(Content(name: String(text[text.index(after: colon)...]), size: size, isAsset: false))
  }
}
