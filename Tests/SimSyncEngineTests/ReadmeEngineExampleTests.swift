import Foundation
import Scenarios
import Simulator
import Testing

@testable import SimSyncEngine

/// docs/your-engine-tour.md (the README's "Your own sync engine" path, in full) is the package in
/// `Examples/NotesSync`, file for file, and its sample run is what the runner prints for that app
/// and scenario; the README's own section shows files of that package only. (CI builds the example
/// package, runs its tests and its tool, from `/`.)
@Suite struct ReadmeEngineExampleTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
  static let example = root.appendingPathComponent("Examples/NotesSync")

  /// The section's fenced blocks: (language, text without a final newline).
  static func blocks(in document: String = "docs/your-engine-tour.md") throws -> [(language: String, text: String)] {
    let data = try #require(FileManager.default.contents(atPath: root.appendingPathComponent(document).path))
    return try #require(MarkdownBlocks.inSection("## Your own sync engine", of: String(decoding: data, as: UTF8.self)))
  }

  static func exampleFile(_ path: String) throws -> String {
    let text = try String(contentsOf: example.appendingPathComponent(path), encoding: .utf8)
    return text.hasSuffix("\n") ? String(text.dropLast()) : text
  }

  @Test func theReadmeShowsTheExamplePackageFileForFile() throws {
    let blocks = try Self.blocks()
    let shown = ["Tests/NotesSyncTests/NotesAppSyncTests.swift", "Sources/notes-sim/main.swift"]
    for path in shown {
      let file = try Self.exampleFile(path)
      #expect(blocks.contains { $0.text == file }, "docs/your-engine-tour.md does not show \(path) as it is")
    }
    let files = try shown.map(Self.exampleFile)
    for block in blocks where block.language == "swift" && !block.text.contains("PackageDescription") {
      #expect(files.contains(block.text), "a block of docs/your-engine-tour.md is no file of Examples/NotesSync:\n\(block.text)")
    }
    // The manifest: the example's targets and products, with a tagged dependency.
    let manifest = try #require(blocks.first { $0.text.contains("PackageDescription") }).text
    let example = try Self.exampleFile("Package.swift")
    for line in ["name: \"NotesSync\",", "platforms: [.macOS(.v13), .iOS(.v16)],", "name: \"notes-sim\",", "name: \"NotesSyncTests\","] {
      #expect(manifest.contains(line) && example.contains(line), "\(line)")
    }
    for product in ["SimCLI", "SimSyncEngine", "Scenarios", "SimTesting"] {
      #expect(manifest.contains(".product(name: \"\(product)\", package: \"conflict-sim\")"), "\(product)")
      #expect(example.contains(".product(name: \"\(product)\", package: sim)"), "\(product)")
    }
  }

  @Test func theReadmeShowsFilesOfTheExamplePackageOnly() throws {
    let blocks = try Self.blocks(in: "README.md").filter { $0.language == "swift" }
    let files = try ["Tests/NotesSyncTests/NotesAppSyncTests.swift", "Sources/notes-sim/main.swift"].map(Self.exampleFile)
    #expect(!blocks.isEmpty)
    for block in blocks {
      #expect(files.contains(block.text), "a block of the README's Your own sync engine is no file of Examples/NotesSync:\n\(block.text)")
    }
  }

  @Test func theReadmeSampleRunIsWhatTheRunnerPrints() throws {
    let blocks = try Self.blocks()
    let shown = try #require(blocks.first { $0.language.isEmpty && $0.text.hasPrefix("app-list-deleted") }).text
    let report = ScenarioRunner.run(try Scenario.load("app-list-deleted"), app: RemindersAppNotCascading.self).report
    // As the example's own tool prints it: its reproduce line names the tool.
    let text = ToolName.$current.withValue("notes-sim") { report.text }
    let printed = text.hasSuffix("\n") ? String(text.dropLast()) : text
    #expect(shown == printed)
  }
}
