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
    case unreadable(path: String, reason: String)
    case invalid(ScenarioErrors)

    public var description: String {
      switch self {
      case .notFound(let name, let suggestion, let searched):
        return "no scenario named '\(name)'" + (suggestion.map { "; did you mean '\($0)'?" } ?? "")
          + (searched.isEmpty ? "" : " (looked in \(searched.joined(separator: ", ")), then the built-in scenarios)")
      case .unreadable(let path, let reason):
        return "cannot read '\(path)': \(reason)"
      case .invalid(let errors):
        return errors.rendered()
      }
    }
  }

  /// Parses scenario text; `source` names it in diagnostics. Text of more than 16 MiB is refused.
  public static func parse(_ text: String, source: String) -> Result<ScenarioFile, ScenarioErrors> {
    ScenarioParser.parse(text, source: source)
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
    switch parse(text, source: name) {
    case .success(let file): return file
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
    case .success(let file): return file
    case .failure(let errors): throw .invalid(errors)
    }
  }

  /// At most `limit` bytes of the file at `path` (a pipe or a device is not read to its end).
  static func read(_ path: String, upTo limit: Int, source: String) throws(LoadError) -> Data {
    guard let handle = FileHandle(forReadingAtPath: path) else {
      let exists = FileManager.default.fileExists(atPath: path)
      throw .unreadable(path: source, reason: exists ? "permission denied or not a file" : "no such file")
    }
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
