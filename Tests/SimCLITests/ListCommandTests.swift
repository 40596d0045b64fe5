import Foundation
import Scenarios
import Testing

@testable import SimCLI

/// `list` and `compare` show the built-in scenarios beside the user's own, say where each comes
/// from, and agree with `run` on what a name means.
@Suite struct ListCommandTests {
  /// A scenario of the user's that `run` tells apart from the built-in one of the same name: its
  /// expectation's text appears in the report.
  static let shadowing = """
    scenario fat-note-lww
    about "The user's own fat note."
    devices a b
    type Note
      title: string = "" mutable
    at 0s a create Note n1 title="mine"
    settle
    expect n1.title == "mine"

    """

  static let own = """
    scenario x
    about "A user's own scenario."
    devices a b
    type Note
      title: string = ""
    at 0s a create Note n1 title="x"
    settle

    """

  /// A fresh folder holding `scenarios/` with `files` (name → text); removed by the caller.
  static func project(_ label: String, files: [(String, String)]) throws -> URL {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("list-\(label)-\(getpid())")
    try? FileManager.default.removeItem(at: dir)
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    if !files.isEmpty {
      let folder = dir.appendingPathComponent("scenarios")
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      for (name, text) in files { try text.write(to: folder.appendingPathComponent(name + ".scenario"), atomically: true, encoding: .utf8) }
    }
    return dir
  }

  /// The built binary run in `directory` (the working directory decides which `scenarios/` counts).
  static func sim(_ arguments: [String], in directory: URL) throws -> (code: Int32, stdout: String, stderr: String) {
    let process = Process()
    process.executableURL = try builtBinary()
    process.arguments = arguments
    process.currentDirectoryURL = directory
    var environment = ProcessInfo.processInfo.environment
    environment["CONFLICT_SIM_SCENARIOS"] = nil
    process.environment = environment
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
  }

  @Test func theCatalogHasTheBuiltInsBesideTheUsersFolderWithWhatEachHides() throws {
    let dir = try Self.project(
      "catalog", files: [("x", Self.own), ("fat-note-lww", Self.shadowing), ("delete-vs-edit", Scenario.builtInText("delete-vs-edit")!)])
    defer { try? FileManager.default.removeItem(at: dir) }
    let folders = ScenarioLocator.folders(environment: [:], directory: dir.path)
    #expect(folders.first?.label == "./scenarios/")
    #expect(folders.dropFirst().first?.label == "../scenarios/")
    let catalog = ScenarioLocator.catalog(in: folders)
    #expect(catalog.map(\.name) == (Scenario.builtInNames + ["x"]).sorted())
    let byName = Dictionary(uniqueKeysWithValues: catalog.map { ($0.name, $0) })
    #expect(byName["different-fields"]?.origin == .builtIn)
    #expect(byName["different-fields"]?.path == nil)
    #expect(byName["x"]?.origin.label == "./scenarios/")
    #expect(byName["x"]?.hidden == [])
    #expect(byName["fat-note-lww"]?.origin.label == "./scenarios/")
    #expect(byName["fat-note-lww"]?.hidden == [.init(origin: .builtIn, identical: false)])
    #expect(byName["fat-note-lww"]?.shadows == true)
    #expect(byName["delete-vs-edit"]?.hidden == [.init(origin: .builtIn, identical: true)])
    #expect(byName["delete-vs-edit"]?.shadows == false)
    // What the catalog says is what a name resolves to.
    for entry in catalog { #expect(ScenarioLocator.locate(entry.name, in: folders) == entry.origin) }
  }

  @Test func listInAFolderWithScenariosShowsTheBuiltInsBesideThemWithTheirOrigin() throws {
    let dir = try Self.project("both", files: [("x", Self.own)])
    defer { try? FileManager.default.removeItem(at: dir) }
    let r = try Self.sim(["list"], in: dir)
    #expect(r.code == 0, "\(r.stderr)")
    let lines = r.stdout.split(separator: "\n").map(String.init)
    #expect(lines.map { $0.split(separator: " ")[0] } == (Scenario.builtInNames + ["x"]).sorted().map { Substring($0) })
    #expect(lines.contains("x                            ./scenarios/  A user's own scenario."))
    #expect(lines.contains { $0.hasPrefix("two-device-acceptance        built-in      The essay's test") })
    #expect(r.stderr.isEmpty)
  }

  @Test func aUsersFileThatShadowsABuiltInIsMarkedAndIsWhatRunRuns() throws {
    let dir = try Self.project("shadow", files: [("fat-note-lww", Self.shadowing)])
    defer { try? FileManager.default.removeItem(at: dir) }
    let list = try Self.sim(["list"], in: dir)
    #expect(list.code == 0, "\(list.stderr)")
    let line = try #require(list.stdout.split(separator: "\n").first { $0.hasPrefix("fat-note-lww ") })
    #expect(line.contains("./scenarios/ (hides built-in)  The user's own fat note."))
    #expect(list.stderr.contains("'sim-cli run NAME' runs the one listed, not the ones it hides"))
    let run = try Self.sim(["run", "fat-note-lww", "--format", "json"], in: dir)
    #expect(run.code == 0, "\(run.stderr)")
    #expect(run.stdout.contains(#"expect n1.title == \"mine\""#))
  }

  @Test func listWithoutAUserFolderPrintsTheBuiltInsOneNameFirstOnEachLine() throws {
    let dir = try Self.project("none", files: [])
    defer { try? FileManager.default.removeItem(at: dir) }
    let r = try Self.sim(["list"], in: dir)
    #expect(r.code == 0, "\(r.stderr)")
    // What `awk '{print $1}'` (scripts/behaviour-snapshot) reads: the names and nothing else.
    #expect(r.stdout.split(separator: "\n").map { String($0.split(separator: " ")[0]) } == Scenario.builtInNames)
    #expect(r.stdout.split(separator: "\n").allSatisfy { $0.contains("  built-in  ") })
  }

  @Test func listJSONSaysWhereEachComesFrom() throws {
    let dir = try Self.project("json", files: [("x", Self.own), ("fat-note-lww", Self.shadowing)])
    defer { try? FileManager.default.removeItem(at: dir) }
    let r = try Self.sim(["list", "--format", "json"], in: dir)
    #expect(r.code == 0, "\(r.stderr)")
    let items = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
    let byName = Dictionary(uniqueKeysWithValues: items.map { ($0["name"] as! String, $0) })
    #expect(byName["x"]?["origin"] as? String == "./scenarios/")
    #expect((byName["x"]?["path"] as? String)?.hasSuffix("/scenarios/x.scenario") == true)
    #expect(byName["different-fields"]?["origin"] as? String == "built-in")
    #expect(byName["different-fields"]?["path"] is NSNull)
    let hides = try #require(byName["fat-note-lww"]?["hides"] as? [[String: Any]])
    #expect(hides.count == 1)
    #expect(hides.first?["origin"] as? String == "built-in")
    #expect(hides.first?["identical"] as? Bool == false)
  }

  @Test func compareWithoutScenariosComparesWhatListShowsAndSaysWhereEachComesFrom() throws {
    let dir = try Self.project("compare", files: [("x", Self.own)])
    defer { try? FileManager.default.removeItem(at: dir) }
    let json = try Self.sim(["compare", "--policies", "crdt", "--seeds", "1..1", "--format", "json"], in: dir)
    #expect(json.code == 0, "\(json.stderr)")
    let cells = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
    #expect(cells.map { $0["scenario"] as? String } == (Scenario.builtInNames + ["x"]).sorted() + ["fuzz:default"])
    #expect(cells.first { $0["scenario"] as? String == "x" }?["origin"] as? String == "./scenarios/")
    #expect(cells.first { $0["scenario"] as? String == "different-fields" }?["origin"] as? String == "built-in")
    let text = try Self.sim(["compare", "--policies", "crdt", "--seeds", "1..1"], in: dir)
    #expect(text.stdout.contains("scenario                     from          P1"))
    #expect(text.stdout.contains("\nx                            ./scenarios/  ·\n"))
    #expect(text.stdout.contains("\nfuzz:default                 workload      ·\n"))
  }
}
