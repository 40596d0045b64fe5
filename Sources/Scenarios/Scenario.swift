import Foundation
import Replica
@_spi(Kernel) import Simulator

/// Loading scenarios: the named ones built into the library, any file by URL or path, or text.
///
///     let file = try Scenario.load("two-device-acceptance")          // built in
///     let mine = try Scenario.load(contentsOf: URL(fileURLWithPath: "scenarios/mine.scenario"))
///     let inline = try Scenario.parse(text, source: "inline").get()
///
/// The library never searches the working directory: the command-line tool looks in
/// `$CONFLICT_SIM_SCENARIOS` and `scenarios/` folders, and `SimTesting` next to the calling test
/// file, before falling back to the built-in scenarios.
public enum Scenario {
  /// Why a scenario could not be loaded.
  public enum LoadError: Error, CustomStringConvertible, Sendable {
    /// No scenario has that name; `searched` lists where the caller looked besides the built-in ones.
    case notFound(name: String, suggestion: String?, searched: [String])
    /// No file at the path given; `suggestion` is a near file name in the same folder, or the
    /// built-in scenario the path's name matches.
    case fileNotFound(path: String, suggestion: String?)
    /// The file exists but cannot be read (a folder, no permission).
    case unreadable(path: String, reason: String)
    /// The file does not parse: its diagnostics.
    case invalid(ScenarioErrors)

    public var description: String {
      switch self {
      case .notFound(let name, let suggestion, let searched):
        return "no scenario named '\(name)'"
          + (searched.isEmpty ? "" : " (looked in \(searched.joined(separator: ", ")), then the built-in scenarios)")
          + (suggestion.map { "; did you mean '\($0)'?" } ?? "")
      case .fileNotFound(let path, let suggestion):
        return "there is no scenario file '\(path)'" + (suggestion.map { "; did you mean \($0)?" } ?? "")
      case .unreadable(let path, let reason):
        return "cannot read '\(path)': \(reason)"
      case .invalid(let errors):
        return errors.rendered()
      }
    }
  }

  /// Parses scenario text; `source` names it in diagnostics. Text of more than 16 MiB is refused.
  public static func parse(_ text: String, source: String) -> Result<ScenarioFile, ScenarioErrors> {
    ScenarioParser.parse(text, source: source).map { file in
      var file = file
      file.origin = .text(text)
      return file
    }
  }

  /// The names of the scenarios built into the library, sorted.
  public static var builtInNames: [String] { BuiltInScenarios.files.map(\.name) }

  /// The text of a built-in scenario.
  public static func builtInText(_ name: String) -> String? {
    BuiltInScenarios.files.first { $0.name == name }.map { String(decoding: $0.bytes, as: UTF8.self) }
  }

  /// Whether `nameOrPath` names a file rather than a scenario: it ends in `.scenario` or has a `/`.
  public static func isPath(_ nameOrPath: String) -> Bool {
    nameOrPath.hasSuffix(".scenario") || nameOrPath.contains("/")
  }

  /// A file by path (anything ending in `.scenario` or containing `/`), else a built-in scenario
  /// by name.
  public static func load(_ nameOrPath: String) throws(LoadError) -> ScenarioFile {
    if isPath(nameOrPath) { return try load(contentsOf: URL(fileURLWithPath: nameOrPath), source: nameOrPath) }
    return try builtIn(nameOrPath)
  }

  /// A built-in scenario by name.
  public static func builtIn(_ name: String, searched: [String] = []) throws(LoadError) -> ScenarioFile {
    guard let text = builtInText(name) else {
      throw .notFound(name: name, suggestion: Suggestion.closest(to: name, in: builtInNames), searched: searched)
    }
    switch ScenarioParser.parse(text, source: name) {
    case .success(var file):
      file.origin = .builtIn
      return file
    case .failure(let errors): throw .invalid(errors)
    }
  }

  /// The scenario file at `url`; `source` names it in diagnostics and reproduction commands
  /// (default: its path). A file of more than 16 MiB is refused with one diagnostic (without
  /// reading more of it). Invalid UTF-8 in a string or a word is reported at its line and
  /// column; in a comment it is ignored.
  public static func load(contentsOf url: URL, source: String? = nil) throws(LoadError) -> ScenarioFile {
    let path = url.path
    let name = source ?? path
    let data = try read(path, upTo: ScenarioInput.maxBytes + 1, source: name)
    if data.count > ScenarioInput.maxBytes {
      let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
      let errors = data.withUnsafeBytes { raw in
        ScenarioParse.refusal(
          source: name, message: ScenarioInput.tooLargeMessage(byteCount: size.flatMap { $0 >= data.count ? $0 : nil }),
          lineText: ScenarioInput.firstLine(raw.bindMemory(to: UInt8.self)))
      }
      throw .invalid(errors)
    }
    switch ScenarioParser.parse(utf8: data, source: name) {
    case .success(var file):
      file.origin = .file(path: path)
      return file
    case .failure(let errors): throw .invalid(errors)
    }
  }

  /// For a path with no file: a `.scenario` file of a near name in the same folder, else the
  /// built-in scenario of that name (quoted, ready for a message).
  static func nearFile(to path: String) -> String? {
    let url = URL(fileURLWithPath: path)
    let folder = url.deletingLastPathComponent().path
    let name = url.lastPathComponent
    let items = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    // Not the name itself (a link to nothing is listed, and is no file).
    let files = items.filter { $0.hasSuffix(".scenario") && $0 != name }.sorted()
    if let near = Suggestion.closest(to: name, in: files) {
      let shown = path.lastIndex(of: "/").map { String(path[...$0]) + near } ?? near
      return "'\(shown)'"
    }
    let base = name.hasSuffix(".scenario") ? String(name.dropLast(".scenario".count)) : name
    if builtInNames.contains(base) { return "the built-in scenario '\(base)' (run it by name, without .scenario)" }
    return nil
  }

  /// At most `limit` bytes of the file at `path` (a pipe or a device is not read to its end).
  static func read(_ path: String, upTo limit: Int, source: String) throws(LoadError) -> Data {
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
      var link = stat()
      if lstat(path, &link) == 0, link.st_mode & S_IFMT == S_IFLNK {
        throw .unreadable(path: source, reason: "it is a symbolic link to a file that does not exist")
      }
      throw .fileNotFound(path: source, suggestion: nearFile(to: path))
    }
    if isFolder.boolValue { throw .unreadable(path: source, reason: "it is a folder, not a scenario file") }
    // Opened without blocking — a named pipe with no writer would hang the open — then read as
    // usual (such a pipe reads as empty).
    let fd = open(path, O_RDONLY | O_NONBLOCK)
    guard fd >= 0 else { throw .unreadable(path: source, reason: "permission denied") }
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
    let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
    // The handle closes the file when it is released.
    guard #available(macOS 10.15.4, iOS 13.4, tvOS 13.4, watchOS 6.2, *) else { return handle.readData(ofLength: limit) }
    var data = Data()
    do {
      while data.count < limit {
        guard let chunk = try handle.read(upToCount: limit - data.count), !chunk.isEmpty else { break }
        data.append(chunk)
      }
    } catch {
      throw .unreadable(path: source, reason: "permission denied or not a file")
    }
    return data
  }
}
