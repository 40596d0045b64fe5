// The code of SimTesting.docc/GettingStarted.md, verbatim (imports gathered above), so that it compiles and runs;
// `GettingStartedArticleTests` checks that every block of the article is here as written.
// (The article's loss is pinned by `expectViolations`, so these tests pass.)

import Foundation
import SimTesting
import Testing
import XCTest

@Test func offlineEditsSurvive() {
  // The file's own `expect` lines must hold (without any: no violations).
  expectScenarioHolds(scenario: "two-device-acceptance")
}

@Test(arguments: scenarioNames(includingBuiltIn: true))
func everyScenarioHoldsWhatItSays(_ name: String) {
  expectScenarioHolds(scenario: name)
}

@Test func wholeRecordLastWriterWinsLosesTheMarginNote() {
  expectViolations(.lostEdit, count: 1, scenario: "fat-note-lww")
}

@Test func mergedTextLosesNothing() {
  expectNoViolations(scenario: "fat-note-lww", policy: "crdt")
}

@Test func appendOnlySurvivesRandomWorkloads() {
  expectFuzzPasses(policy: "append-only", seeds: 1...30)
}

@Test(arguments: appLessons(for: RemindersApp.self).filter(\.applies).map(\.name))
func everyLessonHolds(_ lesson: String) {
  expectScenarioHolds(app: RemindersApp.self, scenario: lesson)
}

@Test func survivesRandomWorkloadsOnItsOwnSchema() {
  expectFuzzPasses(app: RemindersApp.self, seeds: 1...10)
}

final class SyncDesignTests: XCTestCase {
  func testOfflineEditsSurvive() {
    XCTAssertScenarioHolds(scenario: "two-device-acceptance")
  }

  func testAppendOnlySurvivesRandomWorkloads() {
    XCTAssertFuzzPasses(policy: "append-only", seeds: 1...5)
  }
}

/// Every Swift block of the getting-started article, the manifest aside, is in this file as written.
@Suite struct GettingStartedArticleTests {
  @Test func theArticlesCodeIsThisFile() throws {
    let here = URL(fileURLWithPath: #filePath)
    let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let article = try String(contentsOf: root.appendingPathComponent("Sources/SimTesting/SimTesting.docc/GettingStarted.md"), encoding: .utf8)
    let source = try String(contentsOf: here, encoding: .utf8)
    let blocks = article.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
    #expect(blocks.count == 6)
    let imports = Set(source.split(separator: "\n").filter { $0.hasPrefix("import ") })
    for block in blocks where !block.contains("// Package.swift") {
      // The formatter gathers imports at the top of the file: they are checked apart.
      let lines = block.split(separator: "\n", omittingEmptySubsequences: false)
      for line in lines where line.hasPrefix("import ") { #expect(imports.contains(line), "\(line)") }
      let code = lines.filter { !$0.hasPrefix("import ") }.drop { $0.isEmpty }.joined(separator: "\n")
      #expect(source.contains(code), "the article's block is not in this file as written:\n\(code)")
    }
  }
}
