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
