import Foundation

/// Reads the user's SwiftData `@Model` sources or Core Data model into an ``ImportedModel``: the
/// schema section of a scenario file plus CloudKit-compatibility findings.
public enum ModelImporter {
  /// The largest file read (16 MiB); a larger one is refused with an error.
  public static let maximumFileSize = 16 << 20
  /// The most files read from a directory.
  static let maximumFiles = 10_000
  /// How deep directories are searched.
  static let maximumDirectoryDepth = 32

  /// Reads SwiftData sources (each a file name, as it should appear in findings, and its text).
  public static func parseSwiftData(_ sources: [(file: String, text: String)]) -> ImportedModel {
    var reader = SwiftDataReader()
    for s in sources { reader.read(file: s.file, text: s.text) }
    let (versions, names) = reader.finish()
    var builder = ModelBuilder(log: reader.log, source: .swiftData)
    return builder.build(versions: versions, versionNames: names, origin: origin(sources.map(\.file)))
  }

  /// Reads Core Data model versions, oldest first (each a version name, the file name as it
  /// should appear in findings, and the `contents` XML). A version that cannot be parsed is
  /// left out with a note at the place of the error.
  public static func parseCoreData(_ versions: [(name: String, file: String, text: String)]) -> ImportedModel {
    var reader = CoreDataReader()
    var raw: [RawVersion] = []
    for (i, v) in versions.enumerated() {
      do throws(ImportError) {
        raw.append(try reader.read(name: v.name, file: v.file, text: v.text, report: i == versions.count - 1))
      } catch {
        reader.log.note(
          error.location ?? SourceLocation(file: v.file, line: 1, column: 1), "unreadable-source",
          "Model version \(v.name) could not be read (\(error.message)); it is left out.")
      }
    }
    var builder = ModelBuilder(log: reader.log, source: .coreData)
    return builder.build(versions: raw, versionNames: raw.map(\.name), origin: origin(versions.map(\.file)))
  }

  static func origin(_ files: [String]) -> String {
    switch files.count {
    case 0: "nothing"
    case 1: files[0]
    case 2: "\(files[0]) and \(files[1])"
    default: "\(files[0]) and \(files.count - 1) more files"
    }
  }

  /// Reads a path: a `.swift` file, a Core Data `.xcdatamodeld` or `.xcdatamodel` directory or
  /// `contents` file, or a directory searched recursively (sorted paths) for `.swift` files and
  /// Core Data models. SwiftData sources win when both are present (the Core Data model is
  /// noted). Throws when the path does not exist, nothing in it is recognisable, a file cannot
  /// be read or is larger than ``maximumFileSize``, or a Core Data model is malformed XML.
  public static func load(path: String) throws(ImportError) -> ImportedModel {
    let fm = FileManager.default
    var isDirectory: ObjCBool = false
    guard fm.fileExists(atPath: path, isDirectory: &isDirectory) else {
      throw ImportError(reason: .notFound, path: path, message: "no such file or directory: \(path)")
    }
    let trimmed = path.hasSuffix("/") && path.count > 1 ? String(path.dropLast()) : path
    if isDirectory.boolValue {
      if trimmed.hasSuffix(".xcdatamodeld") { return try loadBundle(trimmed, notes: []) }
      if trimmed.hasSuffix(".xcdatamodel") { return try loadCoreDataVersions([trimmed], origin: trimmed, notes: []) }
      var swiftFiles: [String] = []
      var bundles: [String] = []
      try collect(trimmed, depth: 0, swift: &swiftFiles, bundles: &bundles)
      var sources: [(file: String, text: String)] = []
      for f in swiftFiles { sources.append((f, try read(f))) }
      if !sources.isEmpty {
        var model = parseSwiftData(sources)
        if !model.types.isEmpty || bundles.isEmpty {
          if model.types.isEmpty, model.versions.isEmpty {
            throw ImportError(reason: .nothingRecognisable, path: path, message: "no @Model class and no Core Data model in \(path)")
          }
          model.origin = trimmed
          var log = FindingLog()
          for b in bundles {
            log.note(SourceLocation(file: b, line: 1, column: 1), "unreadable-source", "This Core Data model is not read: the SwiftData models are.")
          }
          model.findings = (model.findings + log.findings).sorted { $0.location < $1.location }
          return model
        }
      }
      guard let first = bundles.first else {
        throw ImportError(reason: .nothingRecognisable, path: path, message: "no @Model class and no Core Data model in \(path)")
      }
      var log = FindingLog()
      for b in bundles.dropFirst() {
        log.note(SourceLocation(file: b, line: 1, column: 1), "unreadable-source", "Only one Core Data model is read; this one is not.")
      }
      var model =
        first.hasSuffix(".xcdatamodeld")
        ? try loadBundle(first, notes: log.findings) : try loadCoreDataVersions([first], origin: first, notes: log.findings)
      model.origin = trimmed
      return model
    }
    let text = try read(trimmed)
    let name = (trimmed as NSString).lastPathComponent
    let looksLikeXML = text.utf8.prefix(512).contains(UInt8(ascii: "<")) && (text.hasPrefix("<?xml") || text.contains("<model"))
    if name == "contents" || (!trimmed.hasSuffix(".swift") && looksLikeXML) {
      let parent = ((trimmed as NSString).deletingLastPathComponent as NSString).lastPathComponent
      let versionName = parent.hasSuffix(".xcdatamodel") ? String(parent.dropLast(12)) : name
      var reader = CoreDataReader()
      let version = try reader.read(name: versionName, file: trimmed, text: text, report: true)
      var builder = ModelBuilder(log: reader.log, source: .coreData)
      return builder.build(versions: [version], versionNames: [versionName], origin: trimmed)
    }
    let model = parseSwiftData([(trimmed, text)])
    if model.types.isEmpty && model.versions.isEmpty {
      throw ImportError(reason: .nothingRecognisable, path: path, message: "no @Model class and no Core Data model in \(path)")
    }
    return model
  }

  /// The text of a file, refusing one over ``maximumFileSize``; bytes that are not UTF-8 become
  /// U+FFFD.
  static func read(_ path: String) throws(ImportError) -> String {
    // Opened without blocking — a named pipe with no writer would hang the open — then read as
    // usual (such a pipe reads as empty).
    let fd = open(path, O_RDONLY | O_NONBLOCK)
    guard fd >= 0 else { throw ImportError(reason: .unreadable, path: path, message: "cannot read \(path)") }
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
    let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: false)
    defer { try? handle.close() }
    let data: Data
    do {
      data = try handle.read(upToCount: maximumFileSize + 1) ?? Data()
    } catch {
      throw ImportError(reason: .unreadable, path: path, message: "cannot read \(path): \(error.localizedDescription)")
    }
    if data.count > maximumFileSize {
      throw ImportError(reason: .tooLarge, path: path, message: "\(path) is larger than 16 MiB; it is not read")
    }
    return String(decoding: data, as: UTF8.self)
  }

  static func collect(_ directory: String, depth: Int, swift: inout [String], bundles: inout [String]) throws(ImportError) {
    guard depth <= maximumDirectoryDepth, swift.count < maximumFiles else { return }
    let fm = FileManager.default
    let names: [String]
    do {
      names = try fm.contentsOfDirectory(atPath: directory).sorted()
    } catch {
      throw ImportError(reason: .unreadable, path: directory, message: "cannot read the directory \(directory)")
    }
    for name in names where !name.hasPrefix(".") {
      let full = directory + "/" + name
      let type = (try? fm.attributesOfItem(atPath: full)[.type] as? FileAttributeType) ?? nil
      // A name whose bytes are not UTF-8 is listed with U+FFFD in their place, and that name
      // is no file: said, not skipped.
      if type == nil, name.unicodeScalars.contains("\u{FFFD}"), !fm.fileExists(atPath: full) {
        throw ImportError(
          reason: .unreadable, path: full,
          message: "a name in the directory \(directory) is not UTF-8 (shown as \(name)); rename it: import reads names as UTF-8 and cannot open it")
      }
      if type == .typeSymbolicLink { continue }
      if type == .typeDirectory {
        if name.hasSuffix(".xcdatamodeld") || name.hasSuffix(".xcdatamodel") {
          bundles.append(full)
        } else {
          try collect(full, depth: depth + 1, swift: &swift, bundles: &bundles)
        }
      } else if name.hasSuffix(".swift") && type == .typeRegular {
        swift.append(full)
      }
    }
  }

  /// An `.xcdatamodeld`: its versions in natural order of their names, the current one last.
  static func loadBundle(_ bundle: String, notes: [ImportFinding]) throws(ImportError) -> ImportedModel {
    let fm = FileManager.default
    let names = ((try? fm.contentsOfDirectory(atPath: bundle)) ?? []).filter { $0.hasSuffix(".xcdatamodel") }
    var ordered = names.sorted { naturalLess($0, $1) }
    var log = FindingLog()
    log.findings = notes
    let currentFile = bundle + "/.xccurrentversion"
    if fm.fileExists(atPath: currentFile) {
      let text = try read(currentFile)
      if let current = currentVersionName(text, file: currentFile) {
        if let i = ordered.firstIndex(of: current) {
          ordered.append(ordered.remove(at: i))
        } else {
          log.note(
            SourceLocation(file: currentFile, line: 1, column: 1), "unreadable-source",
            "The current version \(current) is not in the bundle; the last by name is used.")
        }
      } else {
        log.note(
          SourceLocation(file: currentFile, line: 1, column: 1), "unreadable-source",
          "The current version could not be read; the last by name is used.")
      }
    }
    guard !ordered.isEmpty else {
      throw ImportError(reason: .nothingRecognisable, path: bundle, message: "no @Model class and no Core Data model in \(bundle)")
    }
    return try loadCoreDataVersions(ordered.map { bundle + "/" + $0 }, origin: bundle, notes: log.findings)
  }

  static func loadCoreDataVersions(_ directories: [String], origin: String, notes: [ImportFinding]) throws(ImportError) -> ImportedModel {
    var reader = CoreDataReader()
    reader.log.findings = notes
    var versions: [RawVersion] = []
    for (i, dir) in directories.enumerated() {
      let file = dir + "/contents"
      guard FileManager.default.fileExists(atPath: file) else {
        throw ImportError(reason: .unreadable, path: file, message: "the model version \(dir) has no contents file")
      }
      let name = String((dir as NSString).lastPathComponent.dropLast(12))
      versions.append(try reader.read(name: name, file: file, text: try read(file), report: i == directories.count - 1))
    }
    var builder = ModelBuilder(log: reader.log, source: .coreData)
    return builder.build(versions: versions, versionNames: versions.map(\.name), origin: origin)
  }

  /// `_XCCurrentVersionName` of an `.xccurrentversion` plist.
  static func currentVersionName(_ text: String, file: String) -> String? {
    guard let root = try? XMLReader.parse(text, file: file) else { return nil }
    var stack = [root]
    while let node = stack.popLast() {
      for (i, child) in node.children.enumerated() where child.name == "key" && child.text == "_XCCurrentVersionName" {
        if i + 1 < node.children.count, node.children[i + 1].name == "string" { return node.children[i + 1].text.trimmingSpaces() }
      }
      stack.append(contentsOf: node.children)
    }
    return nil
  }

  /// Natural order: runs of digits compare as numbers (`Model 2` before `Model 10`).
  static func naturalLess(_ a: String, _ b: String) -> Bool {
    func chunks(_ s: String) -> [(String, Int?)] {
      var out: [(String, Int?)] = []
      var current = ""
      var digits = false
      for c in s {
        let d = c.isASCII && c.isNumber
        if !current.isEmpty && d != digits {
          out.append((current, digits ? Int(current.prefix(18)) : nil))
          current = ""
        }
        digits = d
        current.append(c)
      }
      if !current.isEmpty { out.append((current, digits ? Int(current.prefix(18)) : nil)) }
      return out
    }
    let x = chunks(a)
    let y = chunks(b)
    for (p, q) in zip(x, y) {
      if let m = p.1, let n = q.1 {
        if m != n { return m < n }
      } else if p.0 != q.0 {
        return p.0 < q.0
      }
    }
    return x.count != y.count ? x.count < y.count : a < b
  }
}
