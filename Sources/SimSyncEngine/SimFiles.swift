import Foundation

/// The simulated device's files (``SimDevice/files``): the app's container, where its own files
/// live until it deletes them, and the staging area CloudKit fetches assets into (Apple,
/// `CKAsset`: "The system regularly deletes files in the staging area to reclaim disk space. To
/// avoid this behavior, move the data into your app's container as soon as you fetch it").
///
/// A file is a name and a size, never bytes. Its URL is `sim://DEVICE/container/PATH` or
/// `sim://DEVICE/staging/NAME`; the methods are `FileManager`'s, so that a delegate's file code
/// ports by renaming `FileManager.default` to `device.files`:
///
///     // In the fetch's delegate call: copy each asset out of staging.
///     if let asset = record["photo"] as? SyncAsset, let staged = asset.fileURL {
///       let mine = device.files.containerURL.appendingPathComponent(staged.lastPathComponent)
///       if !device.files.fileExists(at: mine) { try device.files.copyItem(at: staged, to: mine) }
///       row.photo = mine
///     }
///
/// A file copied or moved keeps its content (the asset a record refers to is the same file under
/// another path). The files survive kills; the staging area is emptied when the scenario says
/// `DEVICE purge-staging`, and the user's `DEVICE delete-file ID.FIELD` deletes every copy of
/// that field's file.
public final class SimFiles: @unchecked Sendable {
  /// The app's container: files here are the app's until it deletes them.
  public let containerURL: URL
  /// The staging area: where a fetched record's assets are, until the system purges it. The app
  /// may read, copy, move and delete files here, not write them.
  public let stagingURL: URL
  /// The files by path (`/container/IMG_0042.heic`).
  @exclusivity(unchecked) var files: [String: AssetContent] = [:]
  /// The last content at each path that ever held a file: an asset the app made from the URL of
  /// a file since deleted is still that content.
  @exclusivity(unchecked) var known: [String: AssetContent] = [:]
  /// Bumped at every change (the driver reads the files again only after one).
  @exclusivity(unchecked) var version: UInt64 = 0

  /// What a device's name keeps unescaped in a URL's host (letters, digits, `-._~`).
  static let hostCharacters = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
  static let container = "/container/"
  static let staging = "/staging/"

  init(device: String) {
    let host = device.addingPercentEncoding(withAllowedCharacters: Self.hostCharacters) ?? "device"
    containerURL = URL(string: "sim://\(host)\(Self.container)")!
    stagingURL = URL(string: "sim://\(host)\(Self.staging)")!
  }

  /// The path of `url` on this device (`/container/IMG_0042.heic`), or nil for a URL of no file
  /// of this device.
  func path(_ url: URL) -> String? {
    guard url.scheme == "sim", url.host == containerURL.host else { return nil }
    let path = url.standardized.path
    guard path.hasPrefix(Self.container) || path.hasPrefix(Self.staging), !path.hasSuffix("/") else { return nil }
    return path
  }

  /// The URL of a path of this device (a folder's, when `folder`).
  func url(_ path: String, folder: Bool = false) -> URL {
    let staged = path.hasPrefix(Self.staging)
    let rest = path.dropFirst(staged ? Self.staging.count : Self.container.count)
    return (staged ? stagingURL : containerURL).appendingPathComponent(String(rest), isDirectory: folder)
  }

  func put(_ content: AssetContent, at path: String) {
    if files[path] == content { return }
    files[path] = content
    known[path] = content
    version &+= 1
  }

  func error(_ code: CocoaError.Code, _ url: URL) -> CocoaError { CocoaError(code, userInfo: [NSURLErrorKey: url]) }

  /// A file the app writes: `name` in the container, of `size` bytes (replacing any file there).
  /// Its content is known by the file's name. Returns its URL.
  @discardableResult
  public func write(_ name: String, size: Int64) -> URL {
    let url = containerURL.appendingPathComponent(name)
    if let path = path(url) { put(AssetContent(name: url.lastPathComponent, size: size), at: path) }
    return url
  }

  /// Writes a file of `size` bytes at `url`, in the container (replacing any file there): its
  /// content is known by the file's name. Throws `CocoaError(.fileWriteNoPermission)` for a URL
  /// outside the container (the staging area is the system's).
  public func write(size: Int64, to url: URL) throws {
    guard let path = path(url), path.hasPrefix(Self.container) else { throw error(.fileWriteNoPermission, url) }
    put(AssetContent(name: url.lastPathComponent, size: size), at: path)
  }

  /// Whether there is a file at `url`.
  public func fileExists(at url: URL) -> Bool { path(url).map { files[$0] != nil } ?? false }

  /// The size of the file at `url` in bytes, or nil when there is none.
  public func fileSize(at url: URL) -> Int64? { path(url).flatMap { files[$0]?.size } }

  /// Copies the file at `source` to `destination`, in the container (`FileManager.copyItem`):
  /// the copy holds the same content. Throws `CocoaError(.fileNoSuchFile)` when there is no
  /// file at `source`, `.fileWriteFileExists` when there is one at `destination`, and
  /// `.fileWriteNoPermission` for a destination outside the container.
  public func copyItem(at source: URL, to destination: URL) throws {
    guard let from = path(source), let content = files[from] else { throw error(.fileNoSuchFile, source) }
    guard let to = path(destination), to.hasPrefix(Self.container) else { throw error(.fileWriteNoPermission, destination) }
    guard files[to] == nil else { throw error(.fileWriteFileExists, destination) }
    put(content, at: to)
  }

  /// Moves the file at `source` to `destination`, in the container (`FileManager.moveItem`),
  /// with the errors of ``copyItem(at:to:)``.
  public func moveItem(at source: URL, to destination: URL) throws {
    try copyItem(at: source, to: destination)
    if let from = path(source) { remove(from) }
  }

  /// Deletes the file at `url` (`FileManager.removeItem`), in the container or the staging
  /// area. Throws `CocoaError(.fileNoSuchFile)` when there is none.
  public func removeItem(at url: URL) throws {
    guard let path = path(url), files[path] != nil else { throw error(.fileNoSuchFile, url) }
    remove(path)
  }

  /// Does nothing (`FileManager.createDirectory`): a folder is there as soon as a file is.
  public func createDirectory(at url: URL, withIntermediateDirectories: Bool) throws {}

  /// The files and folders directly in the folder at `url`, sorted by path
  /// (`FileManager.contentsOfDirectory(at:includingPropertiesForKeys:)`).
  public func contentsOfDirectory(at url: URL) throws -> [URL] {
    var folder = url.standardized.path
    if !folder.hasSuffix("/") { folder += "/" }
    guard url.scheme == "sim", url.host == containerURL.host, folder.hasPrefix(Self.container) || folder.hasPrefix(Self.staging) else {
      throw error(.fileReadNoSuchFile, url)
    }
    var out: [URL] = []
    var seen: Set<String> = []
    for path in files.keys.sorted() where path.hasPrefix(folder) {
      let rest = path.dropFirst(folder.count)
      if let slash = rest.firstIndex(of: "/") {
        let sub = folder + rest[..<slash]
        if seen.insert(sub).inserted { out.append(self.url(sub, folder: true)) }
      } else {
        out.append(self.url(path))
      }
    }
    return out
  }

  func remove(_ path: String) {
    guard files.removeValue(forKey: path) != nil else { return }
    version &+= 1
  }

  // MARK: The simulator's side

  /// The content of the file at `url`, or of the last file there (nil: there never was one).
  func content(at url: URL) -> AssetContent? { path(url).flatMap { files[$0] ?? known[$0] } }

  /// A fetched asset's file, in the staging area (as CloudKit downloads it). Its URL.
  func stage(_ content: AssetContent) -> URL {
    let url = stagingURL.appendingPathComponent(content.name)
    if let p = path(url) { put(content, at: p) }
    return url
  }

  /// The URL a fetched asset's file has in the staging area.
  func stagedURL(_ content: AssetContent) -> URL { stagingURL.appendingPathComponent(content.name) }

  /// The file of a user's pick (a photo chosen, a document attached): put in the container under
  /// its name, as the app would write it. Its URL.
  func place(_ content: AssetContent) -> URL {
    let url = containerURL.appendingPathComponent(content.name)
    if let p = path(url) { put(content, at: p) }
    return url
  }

  /// The first file in the container (by path) that holds the content named `name`.
  func ownURL(of name: String) -> URL? {
    files.keys.sorted().first { $0.hasPrefix(Self.container) && files[$0]?.name == name }.map { url($0) }
  }

  /// Per content name, whether the container holds a file of it and whether the staging area
  /// does.
  func holdings() -> [String: Holding] {
    var out: [String: Holding] = [:]
    for (path, content) in files {
      if path.hasPrefix(Self.container) {
        out[content.name, default: Holding()].own = true
      } else {
        out[content.name, default: Holding()].staged = true
      }
    }
    return out
  }

  /// Where a device holds a content's files.
  struct Holding: Hashable {
    var own = false
    var staged = false
  }

  /// The system purges the staging area.
  func purgeStaging() {
    for path in files.keys.sorted() where path.hasPrefix(Self.staging) { remove(path) }
  }

  /// Every file of the content named `name` goes (the user deleted it).
  func deleteAll(named name: String) {
    for path in files.keys.sorted() where files[path]?.name == name { remove(path) }
  }
}
