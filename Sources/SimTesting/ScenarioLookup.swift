import Foundation

/// How the helpers find a scenario a test names, whatever the working directory (an IDE may run
/// tests from `/`): a path is taken relative to the calling test file's folder first; a name is
/// looked for as `scenarios/NAME.scenario` in that folder and every folder above it (so a
/// package's `scenarios/` folder is found from `Tests/MyTests/`), then among the built-in ones.
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
    var dir = here
    for _ in 0..<16 {
      let folder = dir.appendingPathComponent("scenarios")
      searched.append(folder.path)
      let file = folder.appendingPathComponent(nameOrPath + ".scenario")
      if FileManager.default.fileExists(atPath: file.path) {
        // Named as the test names it: `sim-cli run NAME` from the package finds the same file.
        return try Scenario.load(contentsOf: file, source: nameOrPath)
      }
      let parent = dir.deletingLastPathComponent()
      if parent.path == dir.path { break }
      dir = parent
    }
    return try Scenario.builtIn(nameOrPath, searched: searched)
  }
}

extension ScenarioLookup {
  /// Every `scenarios/` folder from the test file's folder up, nearest first.
  static func folders(near testFile: String) -> [URL] {
    var result: [URL] = []
    var dir = URL(fileURLWithPath: testFile).deletingLastPathComponent()
    for _ in 0..<16 {
      let folder = dir.appendingPathComponent("scenarios")
      var isDirectory: ObjCBool = false
      if FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue { result.append(folder) }
      let parent = dir.deletingLastPathComponent()
      if parent.path == dir.path { break }
      dir = parent
    }
    return result
  }
}

/// The names of the scenarios a test can run by name, sorted: every `NAME.scenario` in the
/// `scenarios/` folders the helpers search (next to the calling test file and above it) and,
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
