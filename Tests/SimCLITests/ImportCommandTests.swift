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

  /// A scenario's `schema from ../../Corpus/…` names the model's files without the `..` walk
  /// (the path the file system resolves to the same place), in `check` as in `import`.
  @Test func findingsNameTheModelByATidyPath() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tidy-\(getpid())/a/b")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent().deletingLastPathComponent()) }
    let model = folder.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Trip.swift")
    try String(contentsOf: Self.corpus.appendingPathComponent("TripPlanner/Trip.swift"), encoding: .utf8).write(
      to: model, atomically: true, encoding: .utf8)
    let scenario = folder.appendingPathComponent("trips.scenario")
    try "devices iPad phone\nschema from ../../Trip.swift\n".write(to: scenario, atomically: true, encoding: .utf8)
    let r = runCLI("check", scenario.path)
    #expect(r.stdout.contains("  \(model.path):8:3: warning: Trip.name"), "\(r.stdout)")
    #expect(!r.stdout.contains("/../"))
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

  /// `import` and `check` give the same findings: for every corpus model, the warnings `check`
  /// prints for a scenario that reads the model (`schema from`) are the ones `import` prints,
  /// word for word and in order (the model's own terms: Swift, or the model editor's); and the
  /// schema `import` prints, pasted into a scenario, draws no advice from `check` that `import`
  /// did not give for the same field (no contradictory advice).
  @Test(arguments: ["Clean", "Inventory.xcdatamodeld", "Library.xcdatamodel", "TripPlanner", "Unreadable", "Versioned"])
  func importAndCheckSayTheSame(model: String) throws {
    let path = Self.corpus.appendingPathComponent(model).path
    let imported = runCLI("import", path)
    #expect(imported.code == .success)
    let importWarnings = Self.blocks(imported.stderr, indent: "").filter { $0.contains(": warning: ") }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("import-check-\(getpid())-\(model)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let reading = directory.appendingPathComponent("reads.scenario").path
    try "devices a b\nschema from \(path)\n".write(toFile: reading, atomically: true, encoding: .utf8)
    let checked = runCLI("check", reading)
    #expect(checked.code == .success, "\(checked.stdout)\(checked.stderr)")
    #expect(Self.blocks(checked.stdout, indent: "  ") == importWarnings, "\(checked.stdout)")
    #expect(importWarnings.isEmpty == checked.stdout.hasPrefix("\(reading): ok ("), "\(checked.stdout)")
    #expect(runCLI("check", reading, "--strict").code == (importWarnings.isEmpty ? .success : .failure))

    // The printed schema pasted into a scenario: each of check's findings is one import gave for
    // that field (check may say less: import also warns of what it did not import).
    let pasted = directory.appendingPathComponent("pasted.scenario").path
    try ("devices a b\n" + imported.stdout).write(toFile: pasted, atomically: true, encoding: .utf8)
    let json = runCLI("check", pasted, "--format", "json")
    #expect(json.code == .success, "\(json.stdout)")
    let files = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
    let checkFindings = try #require(files.first?["findings"] as? [[String: Any]])
    let importJSON = runCLI("import", path, "--format", "json")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(importJSON.stdout.utf8)) as? [String: Any])
    let importFindings = try #require(object["findings"] as? [[String: Any]]).filter { $0["severity"] as? String == "warning" }
    // (A reference stands for a relationship and its inverse: a rule of the to-many, Deny or
    // Ordered, is reported by import at the to-many, which the reference names as its inverse.)
    let types = try #require(object["types"] as? [[String: Any]])
    func inverse(_ type: String?, _ field: String?) -> (type: String, field: String)? {
      let fields = types.first { $0["name"] as? String == type }?["fields"] as? [[String: Any]]
      guard let of = fields?.first(where: { $0["name"] as? String == field })?["inverseOf"] as? String, let dot = of.firstIndex(of: ".") else {
        return nil
      }
      return (String(of[..<dot]), String(of[of.index(after: dot)...]))
    }
    for f in checkFindings {
      let problem = f["problem"] as? String
      let field = f["field"] as? String
      let other = inverse(f["type"] as? String, field)
      #expect(
        importFindings.contains {
          $0["rule"] as? String == problem && ($0["field"] as? String == field || field == nil || $0["field"] as? String == other?.field)
        },
        "check of the pasted schema says \(problem ?? "?") of \(f["type"] ?? "?").\(field ?? "-"), which import does not: \(f["message"] ?? "")")
    }
  }

  /// The findings of a text, each with its indented lines (`Apple's rule`, `fix`), without the
  /// indent `indent` that every line of it has.
  static func blocks(_ text: String, indent: String) -> [String] {
    var out: [String] = []
    for line in text.split(separator: "\n") where line.hasPrefix(indent) {
      let body = line.dropFirst(indent.count)
      if body.hasPrefix("  "), !out.isEmpty {
        out[out.count - 1] += "\n" + body
      } else if body.contains(": warning: ") || body.contains(": note: ") {
        out.append(String(body))
      }
    }
    return out
  }

  @Test func exitCodes() {
    #expect(runCLI("import", "/nonexistent/model").code == .usage)
    let notAModel = Self.corpus.deletingLastPathComponent().appendingPathComponent("MappingTests.swift").path
    let r = runCLI("import", notAModel)
    #expect(r.code == .dataError)
    #expect(r.stderr == "Error: no @Model class and no Core Data model in \(notAModel)\n")
  }
}
