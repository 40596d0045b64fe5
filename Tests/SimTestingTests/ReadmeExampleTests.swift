import Foundation
import SimTesting
import Simulator
import Testing

/// docs/in-your-tests.md (the README's "In your tests" path, in full) is the package in
/// `Examples/NotesApp`, file for file, and its sample failure is exactly what the helper records
/// for that package's scenario; the README's own section shows files of that package only. (CI
/// builds and runs the example package's own tests, from `/`.)
@Suite struct ReadmeExampleTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
  static let example = root.appendingPathComponent("Examples/NotesApp")

  /// The section's fenced blocks in `document` (docs/in-your-tests.md unless told): (language,
  /// text without a final newline).
  static func blocks(in document: String = "docs/in-your-tests.md") throws -> [(language: String, text: String)] {
    let data = try #require(FileManager.default.contents(atPath: root.appendingPathComponent(document).path))
    return try #require(MarkdownBlocks.inSection("## In your tests", of: String(decoding: data, as: UTF8.self)))
  }

  /// The example's file at `path`, without its final newline.
  static func exampleFile(_ path: String) throws -> String {
    let text = try String(contentsOf: example.appendingPathComponent(path), encoding: .utf8)
    return text.hasSuffix("\n") ? String(text.dropLast()) : text
  }

  static let shownFiles = [
    "scenarios/sermon-notes.scenario", "Tests/NotesAppTests/SyncDesignTests.swift", "Tests/NotesAppTests/PreferLongerTitle.swift",
    "Tests/NotesAppTests/SyncDesignXCTests.swift",
  ]

  @Test func theReadmeShowsTheExamplePackageFileForFile() throws {
    let blocks = try Self.blocks()
    for path in Self.shownFiles {
      let file = try Self.exampleFile(path)
      #expect(blocks.contains { $0.text == file }, "docs/in-your-tests.md does not show \(path) as it is")
    }
    // Every test file of the example is shown, and every code block is one of them or the manifest.
    let tests = try FileManager.default.contentsOfDirectory(atPath: Self.example.appendingPathComponent("Tests/NotesAppTests").path)
    #expect(Set(tests.filter { $0.hasSuffix(".swift") }.map { "Tests/NotesAppTests/" + $0 }) == Set(Self.shownFiles.dropFirst()))
    let files = try Self.shownFiles.map(Self.exampleFile)
    for block in blocks where !block.language.isEmpty && !block.text.contains("PackageDescription") {
      #expect(files.contains(block.text), "a block of docs/in-your-tests.md is no file of Examples/NotesApp:\n\(block.text)")
    }
  }

  @Test func theReadmeShowsFilesOfTheExamplePackageOnly() throws {
    let blocks = try Self.blocks(in: "README.md")
    let files = try Self.shownFiles.map(Self.exampleFile)
    #expect(!blocks.isEmpty)
    for block in blocks {
      #expect(files.contains(block.text), "a block of the README's In your tests is no file of Examples/NotesApp:\n\(block.text)")
    }
  }

  @Test func theReadmeManifestIsTheExamplesWithATaggedDependency() throws {
    let manifest = try #require(Self.blocks().first { $0.text.contains("PackageDescription") }).text
    let version = try String(contentsOf: Self.root.appendingPathComponent("Sources/SimCLI/Support/Version.swift"), encoding: .utf8)
    let tag = try #require(version.firstMatch(of: /string = "([0-9.]+)"/)?.1)
    #expect(manifest.contains(".package(url: \"https://github.com/conflict-sim/conflict-sim.git\", from: \"\(tag)\")"))
    let example = try Self.exampleFile("Package.swift")
    for line in ["name: \"NotesApp\",", "platforms: [.macOS(.v13), .iOS(.v16)],"] {
      #expect(manifest.contains(line) && example.contains(line), "\(line)")
    }
    #expect(manifest.contains(".product(name: \"SimTesting\", package: \"conflict-sim\")"))
    #expect(
      example.contains(".testTarget(name: \"NotesAppTests\", dependencies: [.product(name: \"SimTesting\", package: clone.lastPathComponent)])"))
  }

  @Test func theReadmeSampleFailureIsWhatTheHelperRecords() throws {
    let log = IssueLog()
    // Named from the example's test folder, as its tests name it.
    let caller = Self.example.appendingPathComponent("Tests/NotesAppTests/SyncDesignTests.swift").path
    withKnownIssue("sermon-notes loses the typo fix under cloudkit-default: the README shows this failure") {
      expectScenarioHolds(scenario: "sermon-notes", policy: "cloudkit-default", filePath: caller)
    } matching: {
      log.matcher($0)
    }
    let message = try #require(log.messages.first)
    let sample = try #require(Self.blocks().first { $0.language.isEmpty })
    var whole = message
    while whole.hasSuffix("\n") { whole.removeLast() }  // a fenced block cannot end in a blank line
    #expect(sample.text == whole)
  }
}
