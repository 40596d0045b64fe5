import Foundation

/// How a scenario named from Swift is found — by the test helpers (`SimTesting`) and by an app's
/// `AppSchema.scenario` — whatever the working directory (an IDE may run
/// tests from `/`): a path is taken relative to the calling file's folder first; a name is
/// looked for as `scenarios/NAME.scenario` in that folder and every folder above it up to the
/// package's root, the first with a `Package.swift` (so a package's `scenarios/` folder is found
/// from `Tests/MyTests/`, and a package nested in another repository does not see that
/// repository's scenarios), then among the built-in ones.
package enum ScenarioLookup {
  package static func load(_ nameOrPath: String, near testFile: String) throws(Scenario.LoadError) -> ScenarioFile {
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
  package static func searchedFolders(from start: URL) -> [URL] {
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
  package static func folders(near testFile: String) -> [URL] {
    var result: [URL] = []
    for dir in searchedFolders(from: URL(fileURLWithPath: testFile).deletingLastPathComponent()) {
      let folder = dir.appendingPathComponent("scenarios")
      var isDirectory: ObjCBool = false
      if FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue { result.append(folder) }
    }
    return result
  }
}
