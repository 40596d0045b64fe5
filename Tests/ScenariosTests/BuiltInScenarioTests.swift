import Foundation
import Testing

@testable import Scenarios

/// The named scenarios are package resources embedded in the library; the built-in list must be
/// exactly the files in `scenarios/`.
@Suite struct BuiltInScenarioTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  func folder() throws -> [(name: String, text: String)] {
    let dir = Self.root.appendingPathComponent("scenarios")
    let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".scenario") }.sorted()
    return try files.map { (String($0.dropLast(".scenario".count)), try String(contentsOf: dir.appendingPathComponent($0), encoding: .utf8)) }
  }

  @Test func theBuiltInScenariosAreTheFilesInScenarios() throws {
    let files = try folder()
    #expect(Scenario.builtInNames == files.map(\.name), "add the new file to Sources/Scenarios/Scenario+BuiltIn.swift")
    for (name, text) in files {
      #expect(Scenario.builtInText(name) == text, "\(name) differs from scenarios/\(name).scenario")
    }
  }

  @Test func everyBuiltInScenarioParses() {
    for name in Scenario.builtInNames {
      if case .failure(let errors) = Scenario.parse(Scenario.builtInText(name)!, source: name) { Issue.record("\(errors.rendered())") }
    }
  }

  @Test func aBuiltInScenarioLoadsByNameAndAFileByURL() throws {
    #expect(try Scenario.load("fat-note-lww").name == "fat-note-lww")
    let url = Self.root.appendingPathComponent("scenarios/fat-note-lww.scenario")
    #expect(try Scenario.load(contentsOf: url).timeline.count == (try Scenario.load("fat-note-lww").timeline.count))
    #expect(throws: Scenario.LoadError.self) { try Scenario.load("fat-note-lw") }
  }
}
