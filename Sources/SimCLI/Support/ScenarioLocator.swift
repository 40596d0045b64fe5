import Foundation
import Scenarios
@_spi(Kernel) import Simulator

/// Where `sim-cli` finds a scenario named on its command line: a path as it is; a name in
/// `$CONFLICT_SIM_SCENARIOS`, then in `scenarios/` in the working directory or any parent, then
/// among the scenarios built into the tool. The first place that has `NAME.scenario` wins.
///
/// ``catalog(in:)`` lists every name with the place that wins, so `list`, `compare` and `run`
/// agree on what a name means.
enum ScenarioLocator {
  /// A folder searched for `NAME.scenario`, with how people see it (`./scenarios/`).
  struct Folder: Equatable, Sendable {
    /// The folder as searched: `$CONFLICT_SIM_SCENARIOS` as given, else an absolute path.
    var path: String
    /// `$CONFLICT_SIM_SCENARIOS`'s value, or the path relative to the working directory
    /// (`./scenarios/`, `../scenarios/`), ending in `/`.
    var label: String
  }

  /// Where a named scenario comes from.
  enum Origin: Equatable, Sendable {
    case folder(Folder)
    case builtIn

    /// `./scenarios/` or `built-in`: what `list` and `compare` print.
    var label: String {
      switch self {
      case .folder(let folder): folder.label
      case .builtIn: "built-in"
      }
    }
  }

  /// One name and what it means: the scenario `run NAME` loads, and those of the same name it
  /// hides.
  struct Entry: Equatable, Sendable {
    /// A scenario of the same name that the winning one hides.
    struct Hidden: Equatable, Sendable {
      var origin: Origin
      /// Its text is byte for byte the winning one's (the project's own `scenarios/` and the
      /// built-in copies of it).
      var identical: Bool
    }

    var name: String
    /// Where `run NAME` finds it.
    var origin: Origin
    /// The file, or nil for a built-in scenario.
    var path: String?
    /// Scenarios of the same name further down the search order, in that order.
    var hidden: [Hidden] = []

    /// Whether it hides a scenario with different text (a user's file over a built-in one).
    var shadows: Bool { hidden.contains { !$0.identical } }
  }

  /// The folders searched for `NAME.scenario`, in order.
  static func searchFolders() -> [String] { folders().map(\.path) }

  /// The folders searched for `NAME.scenario`, in order, with their labels: the
  /// `CONFLICT_SIM_SCENARIOS` entry of `environment`, then `scenarios/` in `directory` and up to
  /// eleven of its parents.
  static func folders(
    environment: [String: String] = ProcessInfo.processInfo.environment, directory: String = FileManager.default.currentDirectoryPath
  ) -> [Folder] {
    var folders: [Folder] = []
    if let env = environment["CONFLICT_SIM_SCENARIOS"], !env.isEmpty {
      folders.append(Folder(path: env, label: env.hasSuffix("/") ? env : env + "/"))
    }
    var dir = URL(fileURLWithPath: directory)
    for level in 0..<12 {
      let label = (level == 0 ? "./" : String(repeating: "../", count: level)) + "scenarios/"
      folders.append(Folder(path: dir.appendingPathComponent("scenarios").path, label: label))
      let parent = dir.deletingLastPathComponent()
      if parent.path == dir.path { break }
      dir = parent
    }
    var unique: [Folder] = []
    for f in folders where !unique.contains(where: { $0.path == f.path }) { unique.append(f) }
    return unique
  }

  /// Loads a scenario by path or name.
  static func load(_ nameOrPath: String) throws(Scenario.LoadError) -> ScenarioFile {
    if Scenario.isPath(nameOrPath) { return try Scenario.load(nameOrPath) }
    let searched = folders()
    switch locate(nameOrPath, in: searched) {
    case .folder(let folder):
      return try Scenario.load(contentsOf: URL(fileURLWithPath: file(nameOrPath, in: folder)), source: nameOrPath)
    case .builtIn:
      return try Scenario.builtIn(nameOrPath)
    case nil:
      let names = catalog(in: searched).map(\.name)
      throw .notFound(name: nameOrPath, suggestion: Suggestion.closest(to: nameOrPath, in: names), searched: searched.map(\.path))
    }
  }

  /// Where `load` finds the scenario `name` (not a path): the first folder with
  /// `NAME.scenario`, else the built-in one, else nil.
  static func locate(_ name: String, in folders: [Folder]) -> Origin? {
    for folder in folders where FileManager.default.fileExists(atPath: file(name, in: folder)) { return .folder(folder) }
    return Scenario.builtInText(name) != nil ? .builtIn : nil
  }

  /// Every name a scenario can be run by, sorted: the files of every folder and the built-in
  /// scenarios, each name once with the place ``locate(_:in:)`` picks and the ones it hides.
  static func catalog(in folders: [Folder] = folders()) -> [Entry] {
    var places: [String: [Origin]] = [:]
    for folder in folders {
      guard let items = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { continue }
      for item in items.sorted() where item.hasSuffix(".scenario") {
        let name = String(item.dropLast(".scenario".count))
        // A name `run` would take for a path cannot be run by name.
        guard !name.isEmpty, !Scenario.isPath(name) else { continue }
        places[name, default: []].append(.folder(folder))
      }
    }
    for name in Scenario.builtInNames { places[name, default: []].append(.builtIn) }
    return places.keys.sorted().map { name in
      let origins = places[name]!
      let winner = text(name, origins[0])
      return Entry(
        name: name, origin: origins[0], path: path(name, origins[0]),
        hidden: origins.dropFirst().map { Entry.Hidden(origin: $0, identical: winner != nil && text(name, $0) == winner) })
    }
  }

  /// The named scenarios with their files (`(built in)` for a built-in one), as
  /// ``catalog(in:)`` lists them.
  static func named() -> [(name: String, path: String)] {
    catalog().map { ($0.name, $0.path ?? "(built in)") }
  }

  static func file(_ name: String, in folder: Folder) -> String { folder.path + "/" + name + ".scenario" }

  static func path(_ name: String, _ origin: Origin) -> String? {
    switch origin {
    case .folder(let folder): file(name, in: folder)
    case .builtIn: nil
    }
  }

  /// The bytes of the scenario `name` at `origin`, nil when it cannot be read.
  static func text(_ name: String, _ origin: Origin) -> [UInt8]? {
    switch origin {
    case .folder(let folder):
      // Only a regular file is a scenario: a named pipe called `x.scenario` would hang the read.
      Self.isRegularFile(file(name, in: folder)) ? FileManager.default.contents(atPath: file(name, in: folder)).map { [UInt8]($0) } : nil
    case .builtIn: Scenario.builtInText(name).map { Array($0.utf8) }
    }
  }
}

extension ScenarioLocator {
  /// Whether `path` is a regular file (links followed).
  static func isRegularFile(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
  }
}
