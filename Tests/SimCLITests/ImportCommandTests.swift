import Foundation
import Testing

@testable import SimCLI

@Suite struct ImportCommandTests {
  static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("ModelImportTests/Corpus")

  @Test func printsTheSchemaAndFindings() {
    let path = Self.corpus.appendingPathComponent("Clean/Recipes.swift").path
    let r = runCLI("import", path)
    #expect(r.code == .success, "\(r.stderr)")
    #expect(r.stdout.hasPrefix("# imported from \(path) (SwiftData)\n"))
    #expect(r.stdout.contains("  recipe: ref Recipe? on-delete cascade"))
    #expect(r.stderr.hasSuffix("0 warnings, 1 note\n"))
  }

  @Test func rendersWarningsOnStderr() {
    let path = Self.corpus.appendingPathComponent("TripPlanner").path
    let r = runCLI("import", path)
    #expect(r.code == .success)
    #expect(r.stderr.contains("\(path)/Trip.swift:8:3: warning: Trip is unique by name"))
    #expect(r.stderr.contains("  Apple's rule: CloudKit integration does not support unique constraints.\n"))
  }

  @Test func jsonHasTypesFieldsAndFindings() throws {
    let path = Self.corpus.appendingPathComponent("Inventory.xcdatamodeld").path
    let r = runCLI("import", path, "--format", "json")
    #expect(r.code == .success)
    #expect(r.stderr.isEmpty)
    let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    let types = try #require(object["types"] as? [[String: Any]])
    #expect(types.map { $0["name"] as? String } == ["Warehouse", "Shelf", "Item", "Tag", "Person"])
    let findings = try #require(object["findings"] as? [[String: Any]])
    for key in ["file", "line", "column", "severity", "rule", "message", "appleRule", "fix"] {
      #expect(findings.allSatisfy { $0[key] != nil }, "missing \(key)")
    }
  }

  @Test func exitCodes() {
    #expect(runCLI("import", "/nonexistent/model").code == .usage)
    let notAModel = Self.corpus.deletingLastPathComponent().appendingPathComponent("MappingTests.swift").path
    let r = runCLI("import", notAModel)
    #expect(r.code == .dataError)
    #expect(r.stderr == "Error: no @Model class and no Core Data model in \(notAModel)\n")
  }
}
