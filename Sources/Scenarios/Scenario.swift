import Foundation
import Replica
import Simulator

/// Loading scenarios: by name from the `scenarios/` folder that ships with the tool, by path,
/// or from text.
///
///     let file = try Scenario.load("two-device-acceptance")
///     let inline = try Scenario.parse(text, source: "inline").get()
public enum Scenario {
  public enum LoadError: Error, CustomStringConvertible, Sendable {
    case notFound(name: String, suggestion: String?, searched: [String])
    case unreadable(path: String, reason: String)
    case invalid(ScenarioErrors)

    public var description: String {
      switch self {
      case .notFound(let name, let suggestion, let searched):
        return "no scenario named '\(name)'" + (suggestion.map { "; did you mean '\($0)'?" } ?? "")
          + (searched.isEmpty ? "" : " (looked in \(searched.joined(separator: ", ")))")
      case .unreadable(let path, let reason):
        return "cannot read '\(path)': \(reason)"
      case .invalid(let errors):
        return errors.rendered()
      }
    }
  }

  /// Parses scenario text; `source` names it in diagnostics.
  public static func parse(_ text: String, source: String) -> Result<ScenarioFile, ScenarioErrors> {
    ScenarioParser.parse(text, source: source)
  }

  /// Loads a scenario file by path (anything ending in `.scenario` or containing `/`), or a
  /// named one from the scenarios folder.
  public static func load(_ nameOrPath: String) throws(LoadError) -> ScenarioFile {
    let path: String
    if nameOrPath.hasSuffix(".scenario") || nameOrPath.contains("/") {
      path = nameOrPath
    } else {
      guard let found = namedPath(nameOrPath) else {
        // No scenarios folder has it: the copy built into the tool, if there is one.
        if let text = EmbeddedScenarios.files.first(where: { $0.name == nameOrPath })?.text {
          switch parse(text, source: nameOrPath) {
          case .success(let file): return file
          case .failure(let errors): throw .invalid(errors)
          }
        }
        let names = named().map(\.name)
        throw .notFound(name: nameOrPath, suggestion: Suggestion.closest(to: nameOrPath, in: names), searched: searchFolders())
      }
      path = found
    }
    guard let data = FileManager.default.contents(atPath: path) else {
      let exists = FileManager.default.fileExists(atPath: path)
      throw .unreadable(path: path, reason: exists ? "permission denied or not a file" : "no such file")
    }
    // Invalid UTF-8 is decoded with replacement characters, which the parser then reports.
    let text = String(decoding: data, as: UTF8.self)
    switch parse(text, source: nameOrPath) {
    case .success(let file): return file
    case .failure(let errors): throw .invalid(errors)
    }
  }

  /// Where named scenarios are looked for, in order: `$CONFLICT_SIM_SCENARIOS`; `scenarios/` in
  /// the working directory or any parent; the repository the tool was built from. After these,
  /// the copies built into the tool.
  public static func searchFolders() -> [String] {
    var folders: [String] = []
    if let env = ProcessInfo.processInfo.environment["CONFLICT_SIM_SCENARIOS"], !env.isEmpty { folders.append(env) }
    var dir = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    for _ in 0..<12 {
      folders.append(dir.appendingPathComponent("scenarios").path)
      let parent = dir.deletingLastPathComponent()
      if parent.path == dir.path { break }
      dir = parent
    }
    // Sources/Scenarios/Scenario.swift → the repository root.
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    folders.append(root.appendingPathComponent("scenarios").path)
    var unique: [String] = []
    for f in folders where !unique.contains(f) { unique.append(f) }
    return unique
  }

  static func namedPath(_ name: String) -> String? {
    for folder in searchFolders() {
      let path = folder + "/" + name + ".scenario"
      if FileManager.default.fileExists(atPath: path) { return path }
    }
    return nil
  }

  /// The named scenarios of the first folder that has any, sorted by name; without such a
  /// folder, the ones built into the tool (their path is `(built in)`).
  public static func named() -> [(name: String, path: String)] {
    for folder in searchFolders() {
      guard let items = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
      let files = items.filter { $0.hasSuffix(".scenario") }.sorted()
      if !files.isEmpty { return files.map { (String($0.dropLast(".scenario".count)), folder + "/" + $0) } }
    }
    return EmbeddedScenarios.files.map { ($0.name, "(built in)") }
  }
}
