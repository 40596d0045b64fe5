import Foundation

/// A file stored beside a record (`CKAsset`): CloudKit keeps its data apart from the record's
/// own, and it does not count toward the record's 1 MB.
///
///     let url = device.files.write("IMG_0042.heic", size: 3_000_000)
///     record["photo"] = SyncAsset(fileURL: url)
///     // A fetched record's asset is in the staging area: copy it out at once.
///     if let asset = record["photo"] as? SyncAsset, let staged = asset.fileURL {
///       try device.files.copyItem(at: staged, to: device.files.containerURL.appendingPathComponent(staged.lastPathComponent))
///     }
///
/// The file is one of the simulated device's (``SimFiles``): a name and a size, never bytes.
/// When the engine sends the record it reads the file's content from there — what the file is
/// when the request travels: a file gone by then fails the save with `assetFileNotFound`, one
/// changed meanwhile with `assetFileModified`.
public struct SyncAsset: Hashable, Sendable, CustomStringConvertible {
  /// Where the file is, in the simulated device's files (`sim://iPad/container/IMG_0042.heic`; a
  /// fetched asset's is in the staging area, `sim://iPad/staging/IMG_0042.heic`). Nil for each
  /// asset of the server record a `serverRecordChanged` error carries: CloudKit does not download
  /// them (Apple, `CKAsset.fileURL`), so saving that asset again saves no data.
  public let fileURL: URL?
  /// The content the file held when the simulator made the asset (a fetched one, a user's
  /// pick); nil for one the app made from a URL, whose file is read when the record is sent or
  /// shown.
  let content: AssetContent?

  /// An asset of the file at `fileURL` (`CKAsset.init(fileURL:)`). The engine does not delete the
  /// file after the save (Apple: "CloudKit doesn't delete the file at the specified URL"): the
  /// app keeps it, or deletes it once the save is confirmed.
  public init(fileURL: URL) {
    self.fileURL = fileURL
    content = nil
  }

  init(fileURL: URL?, content: AssetContent) {
    self.fileURL = fileURL
    self.content = content
  }

  /// `SyncAsset(sim://iPad/staging/IMG_0042.heic)`; `SyncAsset(no file: IMG_0042.heic)`.
  public var description: String {
    if let fileURL { return "SyncAsset(\(fileURL.absoluteString))" }
    return "SyncAsset(no file: \(content?.name ?? "?"))"
  }
}

/// A simulated file's content: its name (its identity: two files of one name hold the same
/// bytes) and its size in bytes.
struct AssetContent: Hashable, Sendable {
  var name: String
  var size: Int64
}

extension SyncAsset: Codable {
  enum CodingKeys: String, CodingKey {
    case fileURL, name, size
  }

  /// Decodes an asset as ``encode(to:)`` wrote it.
  public init(from decoder: any Decoder) throws {
    let c = try decoder.container(keyedBy: CodingKeys.self)
    let url = try c.decodeIfPresent(String.self, forKey: .fileURL)
    fileURL = try url.map { string in
      guard let url = URL(string: string) else {
        throw DecodingError.dataCorruptedError(forKey: .fileURL, in: c, debugDescription: "not a URL: \(string)")
      }
      return url
    }
    if let name = try c.decodeIfPresent(String.self, forKey: .name) {
      content = AssetContent(name: name, size: try c.decode(Int64.self, forKey: .size))
    } else {
      content = nil
    }
  }

  /// Encodes the file's URL (as a string) and, when known, its content's name and size.
  public func encode(to encoder: any Encoder) throws {
    var c = encoder.container(keyedBy: CodingKeys.self)
    try c.encodeIfPresent(fileURL?.absoluteString, forKey: .fileURL)
    try c.encodeIfPresent(content?.name, forKey: .name)
    try c.encodeIfPresent(content?.size, forKey: .size)
  }
}

extension SyncAsset: SyncRecordValue {
  /// The value as a record stores it.
  public var syncValue: SyncValue { .asset(self) }
  /// The stored value as this type, or nil when it holds another kind.
  public init?(syncValue: SyncValue) {
    guard case .asset(let a) = syncValue else { return nil }
    self = a
  }
}
