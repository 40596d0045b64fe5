import Foundation

/// How the helpers find a scenario a test names, whatever the working directory (an IDE may run
/// tests from `/`): a path is taken relative to the calling test file's folder first; a name is
/// looked for as `scenarios/NAME.scenario` in that folder and every folder above it up to the
/// package's root, the first with a `Package.swift` (so a package's `scenarios/` folder is found
/// from `Tests/MyTests/`, and a package nested in another repository does not see that
/// repository's scenarios), then among the built-in ones.
enum ScenarioLookup {
  static func load(_ nameOrPath: String, near testFile: String) throws(Scenario.LoadError) -> ScenarioFile {
    let here = URL(fileURLWithPath: testFile).deletingLastPathComponent()
    if Scenario.isPath(nameOrPath) {
      let local = URL(fileURLWithPath: nameOrPath, relativeTo: here)
      if !nameOrPath.hasPrefix("/"), FileManager.default.fileExists(atPath: local.path) {
        return try Scenario.load(contentsOf: local, source: local.path)
      }
      return try Scenario.load(nameOrPath)
    }
    var searched: [String] = []
    for dir in searchedFolders(from: here) {
      let folder = dir.appendingPathComponent("scenarios")
      searched.append(folder.path)
      let file = folder.appendingPathComponent(nameOrPath + ".scenario")
      if FileManager.default.fileExists(atPath: file.path) {
        // Named as the test names it: `sim-cli run NAME` from the package finds the same file.
        return try Scenario.load(contentsOf: file, source: nameOrPath)
      }
    }
    return try Scenario.builtIn(nameOrPath, searched: searched)
  }

  /// `start` and the folders above it, nearest first, up to and including the first that holds
  /// a `Package.swift` (the package's root), or 16 levels when none does (an Xcode project).
  static func searchedFolders(from start: URL) -> [URL] {
    var result: [URL] = []
    var dir = start
    for _ in 0..<16 {
      result.append(dir)
      if FileManager.default.fileExists(atPath: dir.appendingPathComponent("Package.swift").path) { break }
      let parent = dir.deletingLastPathComponent()
      if parent.path == dir.path { break }
      dir = parent
    }
    return result
  }
}

extension ScenarioLookup {
  /// Every `scenarios/` folder from the test file's folder up to the package's root, nearest first.
  static func folders(near testFile: String) -> [URL] {
    var result: [URL] = []
    for dir in searchedFolders(from: URL(fileURLWithPath: testFile).deletingLastPathComponent()) {
      let folder = dir.appendingPathComponent("scenarios")
      var isDirectory: ObjCBool = false
      if FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue { result.append(folder) }
    }
    return result
  }
}

/// The names of the scenarios a test can run by name, sorted: every `NAME.scenario` in the
/// `scenarios/` folders the helpers search (next to the calling test file and above it, up to
/// the package's root) and,
/// with `includingBuiltIn`, the built-in scenarios too. For a parameterized test:
///
///     @Test(arguments: scenarioNames())
///     func everyScenarioHolds(_ name: String) {
///       expectScenarioHolds(scenario: name)
///     }
///
/// An empty list gives a test with no cases, which passes without running anything: check
/// `!scenarioNames().isEmpty` in a test of its own if the folder might be missing.
public func scenarioNames(includingBuiltIn: Bool = false, filePath: String = #filePath) -> [String] {
  var names: [String] = []
  for folder in ScenarioLookup.folders(near: filePath) {
    let items = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    names += items.filter { $0.hasSuffix(".scenario") && !$0.hasPrefix(".") }.map { String($0.dropLast(".scenario".count)) }
  }
  if includingBuiltIn { names += Scenario.builtInNames }
  return Array(Set(names)).sorted()
}
