import Foundation
import ModelImport
import Replica

/// `schema from PATH`: the types of the user's own SwiftData or Core Data model, imported as
/// `sim-cli import` prints them.
extension DeclarationParser {
  mutating func parseSchemaFrom(_ i: Int) {
    let t = lines[i].tokens
    let usage = "schema from PATH"
    guard t.count >= 2, t[1].is("from") else {
      if t.count >= 2 {
        error(i, t[1], "expected 'from'; write '\(usage)', as in 'schema from Sources/Model'")
      } else {
        missing(i, "expected 'from PATH'; write '\(usage)', as in 'schema from Sources/Model'")
      }
      return
    }
    guard t.count >= 3 else {
      missing(i, "expected the path of a SwiftData source file, a folder, or a Core Data model (.xcdatamodeld) after 'from'")
      return
    }
    guard expectEnd(i, after: 2, usage: usage) else { return }
    let written = t[2].text
    schemaSource = written
    let path = Self.resolve(written, against: session.source)
    let model: ImportedModel
    do throws(ImportError) {
      model = try ModelImporter.load(path: path)
    } catch {
      self.error(i, t[2], "cannot import the model: \(error.message)")
      return
    }
    switch ScenarioParser.parse(model.scenarioSchema() + "\ndevices importer\n", source: path) {
    case .failure(let errors):
      let first = errors.diagnostics.first.map { "\($0.location.line):\($0.location.column): \($0.message)" } ?? "no detail"
      error(i, t[2], "the schema imported from \(written) does not read as a scenario schema (\(first)); please report it")
    case .success(let imported):
      var names: [String] = []
      for type in imported.schema.types {
        if let prior = typeLines[type.name] {
          error(i, t[2], "the model declares type '\(type.name)', already declared on line \(prior)")
          continue
        }
        typeLines[type.name] = lines[i].number
        for f in type.fields { fieldLines["\(type.name).\(f.name)"] = lines[i].number }
        types.append(type)
        names.append(type.name)
      }
      // The importer's warnings, as `sim-cli import` prints them: `check` and the oracle give
      // the model's own findings, in its terms, for the types read from it.
      schemaImport = SchemaImport(path: written, types: names, findings: model.warnings.compactMap(SchemaFinding.init(importedFrom:)))
    }
  }

  /// A relative path is read from the directory of the scenario file (when the scenario has a
  /// path), else from the working directory. The result is tidied by its words alone, so that
  /// findings name `Tests/Model.swift`, not `docs/examples/../../Tests/Model.swift`.
  static func resolve(_ path: String, against source: String) -> String {
    guard !path.hasPrefix("/"), source.contains("/") else { return path }
    let directory = (source as NSString).deletingLastPathComponent
    guard !directory.isEmpty else { return path }
    let joined = (directory as NSString).appendingPathComponent(path)
    let tidied = tidy(joined)
    // Tidied only when the file system agrees (no symbolic link made a `..` mean another folder).
    let real = { (p: String) in URL(fileURLWithPath: p).resolvingSymlinksInPath().path }
    return tidied != joined && real(tidied) == real(joined) ? tidied : joined
  }

  /// `a/./b/../c` as `a/c`: `.` dropped, and `..` taking away the folder before it where that
  /// folder is named (not itself `..`), by the words alone (``resolve(_:against:)`` keeps the
  /// result only when the file system resolves it to the same place).
  static func tidy(_ path: String) -> String {
    let absolute = path.hasPrefix("/")
    var kept: [Substring] = []
    for word in path.split(separator: "/", omittingEmptySubsequences: true) {
      if word == "." { continue }
      if word == "..", let last = kept.last, last != ".." {
        kept.removeLast()
        continue
      }
      if word == "..", absolute, kept.isEmpty { continue }
      kept.append(word)
    }
    let joined = kept.joined(separator: "/")
    return absolute ? "/" + joined : (joined.isEmpty ? "." : joined)
  }
}

extension SchemaFinding {
  /// An importer's warning about the app's model, word for word, at its place in the model; nil
  /// for a rule that is not one of ``SchemaFinding/Problem``'s (every warning the importer makes
  /// is one: `ImportWordingTests` holds it to that).
  public init?(importedFrom finding: ImportFinding) {
    guard let problem = Problem(rawValue: finding.rule) else { return nil }
    self.init(
      type: finding.type ?? "", field: finding.field, problem: problem, message: finding.message, fix: finding.fix, appleRule: finding.appleRule,
      modelLocation: ModelLocation(file: finding.location.file, line: finding.location.line, column: finding.location.column),
      blocks: finding.blocks)
  }
}
