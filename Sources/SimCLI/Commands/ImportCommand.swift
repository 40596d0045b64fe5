import Foundation
import ModelImport
@_spi(Kernel) import Simulator

/// `sim-cli import PATH`: read a SwiftData or Core Data model into a scenario schema section.
enum ImportCommand {
  static let spec = CommandSpec(
    name: "import", summary: "Read a SwiftData or Core Data model into a scenario schema, with CloudKit findings.",
    discussion: """
      PATH is a .swift file, a Core Data .xcdatamodeld or .xcdatamodel (or its contents file), or a
      directory searched for them. Prints the schema section of a scenario file on stdout and the
      CloudKit-compatibility findings on stderr. Exit 0 when the model was read (findings are
      warnings), 65 when nothing in PATH could be read, 64 when PATH does not exist. With
      --format json, one object on stdout (types, fields, findings) and nothing on stderr.
      """,
    positionals: [.init(name: "PATH", help: "A model file or a directory holding one.")],
    options: [Formats.option],
    examples: ["sim-cli import Sources/Model", "sim-cli import Model.xcdatamodeld --format json"])

  static let command = Command(spec: spec) { args, console in
    let json = args.value("--format") == "json"
    let path = args.positionals[0]
    let model: ImportedModel
    do throws(ImportError) {
      model = try ModelImporter.load(path: path)
    } catch {
      let code: ExitCode = error.reason == .notFound ? .usage : .dataError
      if json {
        var object: [String: JSONValue] = ["ok": false, "path": .string(path), "error": .string(error.message)]
        if let at = error.location { object.merge(location(at)) { $1 } }
        console.out(JSONValue.object(object).serialized() + "\n")
      } else {
        console.err("Error: \(error.description)\n")
      }
      return code
    }
    if json {
      console.out(Self.json(model).serialized() + "\n")
      return .success
    }
    console.out(model.scenarioSchema())
    for finding in model.findings { console.err(finding.rendered()) }
    let warnings = model.findings.filter { $0.severity == .warning }.count
    let notes = model.findings.count - warnings
    console.err("\(warnings) warning\(warnings == 1 ? "" : "s"), \(notes) note\(notes == 1 ? "" : "s")\n")
    return .success
  }

  static func location(_ at: SourceLocation) -> [String: JSONValue] {
    ["file": .string(at.file), "line": .int(Int64(at.line)), "column": .int(Int64(at.column))]
  }

  static func json(_ model: ImportedModel) -> JSONValue {
    let types: [JSONValue] = model.types.map { type in
      var object = location(type.location)
      object["name"] = .string(type.name)
      object["singleton"] = .bool(type.singleton)
      object["uniqueBy"] = .array(type.uniqueBy.map { .string($0) })
      object["since"] = .int(Int64(type.since))
      object["fields"] = .array(
        type.fields.map { field in
          var f = location(field.location)
          f["name"] = .string(field.name)
          f["kind"] = .string(field.kind.scenarioName)
          f["optional"] = .bool(field.optional)
          f["default"] = field.defaultLiteral.map { .string($0) } ?? .null
          f["unique"] = .bool(field.unique)
          f["onDelete"] = field.onDelete.map { .string($0.rawValue) } ?? .null
          f["ordered"] = .bool(field.ordered)
          f["hasInverse"] = .bool(field.hasInverse)
          f["since"] = .int(Int64(field.since))
          f["inverseOf"] = field.inverseOf.map { .string($0) } ?? .null
          return .object(f)
        })
      return .object(object)
    }
    let findings: [JSONValue] = model.findings.map { finding in
      var object = location(finding.location)
      object["severity"] = .string(finding.severity.rawValue)
      object["rule"] = .string(finding.rule)
      object["message"] = .string(finding.message)
      object["appleRule"] = .string(finding.appleRule)
      object["fix"] = .string(finding.fix)
      object["type"] = finding.type.map { .string($0) } ?? .null
      object["field"] = finding.field.map { .string($0) } ?? .null
      return .object(object)
    }
    return [
      "ok": true, "source": .string(model.source.rawValue), "origin": .string(model.origin), "versions": .array(model.versions.map { .string($0) }),
      "types": .array(types), "findings": .array(findings), "schema": .string(model.scenarioSchema()),
    ]
  }
}
