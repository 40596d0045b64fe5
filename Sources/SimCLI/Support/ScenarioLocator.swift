import Foundation
import Scenarios
@_spi(Kernel) import Simulator

/// Where `sim-cli` finds a scenario named on its command line: a path as it is; a name in
/// `$CONFLICT_SIM_SCENARIOS`, then in `scenarios/` in the working directory or any parent, then
/// among the scenarios built into the tool.
enum ScenarioLocator {
  /// The folders searched for `NAME.scenario`, in order.
  static func searchFolders() -> [String] {
    var folders: [String] = []
    if let env = ProcessInfo.processInfo.environment["CONFLICT_SIM_SCENARIOS"], !env.isEmpty { folders.append(env) }
    var dir = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    for _ in 0..<12 {
      folders.append(dir.appendingPathComponent("scenarios").path)
      let parent = dir.deletingLastPathComponent()
      if parent.path == dir.path { break }
      dir = parent
    }
    var unique: [String] = []
    for f in folders where !unique.contains(f) { unique.append(f) }
    return unique
  }

  /// Loads a scenario by path or name.
  static func load(_ nameOrPath: String) throws(Scenario.LoadError) -> ScenarioFile {
    if Scenario.isPath(nameOrPath) { return try Scenario.load(nameOrPath) }
    for folder in searchFolders() {
      let path = folder + "/" + nameOrPath + ".scenario"
      if FileManager.default.fileExists(atPath: path) {
        return try Scenario.load(contentsOf: URL(fileURLWithPath: path), source: nameOrPath)
      }
    }
    if Scenario.builtInText(nameOrPath) != nil { return try Scenario.builtIn(nameOrPath) }
    let names = named().map(\.name)
    throw .notFound(name: nameOrPath, suggestion: Suggestion.closest(to: nameOrPath, in: names), searched: searchFolders())
  }

  /// The named scenarios of the first folder that has any, sorted by name; without such a
  /// folder, the built-in ones (their path is `(built in)`).
  static func named() -> [(name: String, path: String)] {
    for folder in searchFolders() {
      guard let items = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
      let files = items.filter { $0.hasSuffix(".scenario") }.sorted()
      if !files.isEmpty { return files.map { (String($0.dropLast(".scenario".count)), folder + "/" + $0) } }
    }
    return Scenario.builtInNames.map { ($0, "(built in)") }
  }
}
