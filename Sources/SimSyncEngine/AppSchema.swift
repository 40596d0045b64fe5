import Foundation
import Replica
import Scenarios

/// What an app stores and how it names its records, stated once: the record types and fields
/// (in scenario syntax, from a scenario file, or imported from a SwiftData or Core Data model),
/// the zones it keeps them in, and whether a record's name may come back after a delete. The
/// fuzzer draws the app's workload from it, and the named app lessons are bound to it.
///
///     final class RemindersApp: SimApp {
///       static let schema = AppSchema(
///         """
///         type List
///           name: string = "" mutable
///         type Reminder
///           list: ref List? on-delete cascade
///           title: string = "" mutable
///           notes: text = ""
///         """, recordNames: .uuids, zoneName: "Reminders")
///       …
///     }
public struct AppSchema: Sendable {
  /// How an app names its records.
  public enum RecordNames: Sendable, Hashable {
    /// A new name for every record, never used again: the scenario's ids (`n1`, `r7`). No
    /// record is made again under a deleted one's name.
    case fresh
    /// A new UUID for every record, as Core Data, SwiftData and Apple's sample app name them
    /// (`UUID().uuidString`): the app is handed names like `1F0C…-…-7A3E`, each drawn from the
    /// scenario's id (reports still say `n1`). No record is made again under a deleted one's name.
    case uuids
    /// Names the app derives from content (a tag, a day, a setting's key): a record deleted may
    /// be made again under its name, and the fuzzer follows some deletes with such a create.
    case reused
    /// Names of the app's own form, from a pattern: `{uuid}` is a UUID drawn from the
    /// scenario's id (as ``uuids``), `{id}` the id itself (`n1`), `{type}` the record's type as
    /// the schema names it. `.pattern("{type}|{uuid}")` hands the app `Note|1F0C…`,
    /// `.pattern("{uuid}:{type}")` `1F0C…:Note` (as sqlite-data names a row's record after its
    /// primary key and table). The pattern has `{uuid}` or `{id}`, so that every record has a
    /// name of its own; a name it makes must be one CloudKit takes (`CKRecord.ID`: ASCII, at
    /// most 255 characters, not starting with an underscore). No record is made again under a
    /// deleted one's name.
    case pattern(String)

    /// Why the naming cannot be used, in words; nil when it can.
    var problem: String? {
      guard case .pattern(let p) = self else { return nil }
      if !p.contains("{uuid}") && !p.contains("{id}") {
        return "the record-name pattern \"\(p)\" has neither {uuid} nor {id}: every record would get the same name"
      }
      var rest = p
      for token in ["{uuid}", "{id}", "{type}"] { rest = rest.replacingOccurrences(of: token, with: "") }
      if let brace = rest.first(where: { $0 == "{" || $0 == "}" }) {
        return "the record-name pattern \"\(p)\" has a '\(brace)' that is not part of {uuid}, {id} or {type}"
      }
      return nil
    }
  }

  enum Source: Sendable {
    /// Any types: the scenario's own (and, for fuzzing, notes with a title, a tag and a body).
    case any
    /// `type` lines in scenario syntax, declared in the Swift file at `file`.
    case types(String, file: String)
    /// The schema of a scenario file (a name or a path, a path taken from `near`'s folder first).
    case scenario(String, near: String)
    /// A SwiftData or Core Data model (a path, taken from `near`'s folder).
    case model(String, near: String)
  }

  let source: Source
  /// How the app names its records.
  public var recordNames: RecordNames
  /// The zone the app keeps its records in (in its private database), unless ``zones`` names
  /// another for a type: the zone of the records the simulator asks the app to make.
  public var zoneName: String
  /// Record types kept in a zone other than ``zoneName``: type name → zone name.
  public var zones: [String: String]

  init(source: Source, recordNames: RecordNames, zoneName: String, zones: [String: String]) {
    self.source = source
    self.recordNames = recordNames
    self.zoneName = zoneName
    self.zones = zones
  }

  /// The record types and fields of `typeLines`, written as a scenario's `type` lines.
  ///
  /// - Parameters:
  ///   - typeLines: `type NAME` lines with their indented fields (`scenario-format.md`).
  ///   - recordNames: how the app names its records.
  ///   - zoneName: the zone the app keeps its records in.
  ///   - zones: record types kept in another zone (type name → zone name).
  ///   - filePath: the declaring file, for diagnostics (the default is the caller's).
  public init(
    _ typeLines: String, recordNames: RecordNames = .fresh, zoneName: String = "Records", zones: [String: String] = [:],
    filePath: String = #filePath
  ) {
    self.init(source: .types(typeLines, file: filePath), recordNames: recordNames, zoneName: zoneName, zones: zones)
  }

  /// The schema of a scenario file: a name (`scenarios/NAME.scenario` next to the declaring file
  /// or in a folder above it up to the package's root, then a built-in one) or a path (taken
  /// from the declaring file's folder first), found as the test helpers find a scenario. The file may itself say `schema from MODEL`.
  public static func scenario(
    _ nameOrPath: String, recordNames: RecordNames = .fresh, zoneName: String = "Records", zones: [String: String] = [:],
    filePath: String = #filePath
  ) -> AppSchema {
    AppSchema(source: .scenario(nameOrPath, near: filePath), recordNames: recordNames, zoneName: zoneName, zones: zones)
  }

  /// The types of a SwiftData model (a folder or `.swift` file of `@Model` classes) or a Core
  /// Data model (`.xcdatamodeld`), imported with CloudKit's rules as `schema from PATH` does;
  /// the path is taken from the declaring file's folder.
  public static func model(
    _ path: String, recordNames: RecordNames = .uuids, zoneName: String = "Records", zones: [String: String] = [:], filePath: String = #filePath
  ) -> AppSchema {
    AppSchema(source: .model(path, near: filePath), recordNames: recordNames, zoneName: zoneName, zones: zones)
  }

  /// Any record types and fields: the app stores what it is given. Scenarios run on their own
  /// schema; the fuzzer draws notes with a title, a tag and a body.
  public static func anyTypes(recordNames: RecordNames = .fresh, zoneName: String = "Records") -> AppSchema {
    AppSchema(source: .any, recordNames: recordNames, zoneName: zoneName, zones: [:])
  }

  /// The zone the app keeps records of `type` in.
  public func zone(forType type: String) -> SyncRecordZoneID { SyncRecordZoneID(zoneName: zones[type] ?? zoneName) }

  /// The schema, read: nil for any types; the problem, in words, when it cannot be read.
  func resolve() -> Result<Schema?, AppSchemaError> {
    switch source {
    case .any:
      return .success(nil)
    case .types(let lines, let file):
      // Parsed as the types of a scenario with one device; diagnostics name the declaring file.
      let header = "scenario app-schema\ndevices app\n"
      switch Scenario.parse(header + lines, source: URL(fileURLWithPath: file).lastPathComponent + " (AppSchema)") {
      case .success(let parsed): return Self.typed(parsed.schema, from: "the AppSchema in \(file)")
      case .failure(let errors):
        var shifted = errors
        for i in shifted.diagnostics.indices { shifted.diagnostics[i].location.line -= 2 }
        return .failure(AppSchemaError(message: "the app's schema does not parse:\n" + shifted.rendered()))
      }
    case .scenario(let nameOrPath, let near):
      do {
        return Self.typed(try ScenarioLookup.load(nameOrPath, near: near).schema, from: nameOrPath)
      } catch {
        return .failure(AppSchemaError(message: "the app's schema: \(error)"))
      }
    case .model(let path, let near):
      let resolved = path.hasPrefix("/") ? path : URL(fileURLWithPath: near).deletingLastPathComponent().appendingPathComponent(path).path
      let text = "scenario app-schema\ndevices app\nschema from \(resolved)\n"
      switch Scenario.parse(text, source: "the AppSchema's model") {
      case .success(let parsed): return Self.typed(parsed.schema, from: path)
      case .failure(let errors): return .failure(AppSchemaError(message: "the app's model could not be imported:\n" + errors.rendered()))
      }
    }
  }

  static func typed(_ schema: Schema, from source: String) -> Result<Schema?, AppSchemaError> {
    schema.types.isEmpty ? .failure(AppSchemaError(message: "the app's schema (\(source)) declares no record types")) : .success(schema)
  }
}

/// Why an app's declared schema cannot be used, in words.
struct AppSchemaError: Error, CustomStringConvertible {
  var message: String
  var description: String { message }
}
