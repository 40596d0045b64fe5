/// An XML element, as the hand-written tokenizer reads it.
final class XMLTag {
  let name: String
  let attributes: [(name: String, value: String)]
  let location: SourceLocation
  var children: [XMLTag] = []
  var text = ""

  init(name: String, attributes: [(name: String, value: String)], location: SourceLocation) {
    self.name = name
    self.attributes = attributes
    self.location = location
  }

  subscript(attribute: String) -> String? { attributes.first { $0.name == attribute }?.value }
}

/// A small, non-validating XML reader: elements, attributes, text, comments, processing
/// instructions, `<!DOCTYPE>` and CDATA. It builds the tree without recursion and throws on
/// malformed input with the line and column.
enum XMLReader {
  static let maximumDepth = 256

  static func parse(_ text: String, file: String) throws(ImportError) -> XMLTag {
    let bytes = Array(text.utf8)
    let n = bytes.count
    var i = 0
    var line = 1
    var lineStart = 0
    let root = XMLTag(name: "#document", attributes: [], location: SourceLocation(file: file, line: 1, column: 1))
    var stack: [XMLTag] = [root]

    func here() -> SourceLocation { SourceLocation(file: file, line: line, column: i - lineStart + 1) }
    func fail(_ message: String, _ at: SourceLocation) -> ImportError {
      ImportError(reason: .malformed, path: file, location: at, message: message)
    }
    func advance(_ count: Int = 1) {
      for _ in 0..<count where i < n {
        if bytes[i] == 0x0A {
          line += 1
          lineStart = i + 1
        }
        i += 1
      }
    }
    func starts(_ s: String) -> Bool {
      let u = Array(s.utf8)
      return i + u.count <= n && Array(bytes[i..<(i + u.count)]) == u
    }
    /// Advances past `terminator`; false at the end of input.
    func skip(past terminator: String) -> Bool {
      let u = Array(terminator.utf8)
      while i < n {
        if bytes[i] == u[0], i + u.count <= n, Array(bytes[i..<(i + u.count)]) == u {
          advance(u.count)
          return true
        }
        advance()
      }
      return false
    }
    func isNameByte(_ c: UInt8) -> Bool {
      (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x5F || c == 0x2D || c == 0x2E || c == 0x3A
        || c >= 0x80
    }
    func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }
    func readName() -> String {
      let s = i
      while i < n && isNameByte(bytes[i]) { i += 1 }
      return String(decoding: bytes[s..<i], as: UTF8.self)
    }

    while i < n {
      if bytes[i] != UInt8(ascii: "<") {
        let s = i
        while i < n && bytes[i] != UInt8(ascii: "<") { advance() }
        stack[stack.count - 1].text += decodeEntities(String(decoding: bytes[s..<i], as: UTF8.self))
        continue
      }
      let at = here()
      if starts("<!--") {
        guard skip(past: "-->") else { throw fail("unterminated XML comment", at) }
      } else if starts("<![CDATA[") {
        advance(9)
        let s = i
        guard skip(past: "]]>") else { throw fail("unterminated CDATA section", at) }
        stack[stack.count - 1].text += String(decoding: bytes[s..<(i - 3)], as: UTF8.self)
      } else if starts("<?") {
        guard skip(past: "?>") else { throw fail("unterminated processing instruction", at) }
      } else if starts("<!") {
        // <!DOCTYPE …> with a possible internal subset in brackets.
        var depth = 0
        var closed = false
        while i < n {
          let c = bytes[i]
          if c == UInt8(ascii: "[") { depth += 1 }
          if c == UInt8(ascii: "]") { depth -= 1 }
          advance()
          if c == UInt8(ascii: ">") && depth <= 0 {
            closed = true
            break
          }
        }
        guard closed else { throw fail("unterminated <!DOCTYPE>", at) }
      } else if starts("</") {
        advance(2)
        let name = readName()
        while i < n && isSpace(bytes[i]) { advance() }
        guard i < n, bytes[i] == UInt8(ascii: ">") else { throw fail("malformed end tag </\(name)", at) }
        advance()
        guard stack.count > 1, stack[stack.count - 1].name == name else {
          throw fail("end tag </\(name)> does not match <\(stack.last!.name)>", at)
        }
        stack.removeLast()
      } else {
        advance()
        let name = readName()
        guard !name.isEmpty else { throw fail("'<' is not followed by an element name", at) }
        var attributes: [(String, String)] = []
        var selfClosing = false
        while true {
          while i < n && isSpace(bytes[i]) { advance() }
          guard i < n else { throw fail("unterminated start tag <\(name)", at) }
          if bytes[i] == UInt8(ascii: ">") {
            advance()
            break
          }
          if bytes[i] == UInt8(ascii: "/"), i + 1 < n, bytes[i + 1] == UInt8(ascii: ">") {
            advance(2)
            selfClosing = true
            break
          }
          let attributeAt = here()
          let attribute = readName()
          guard !attribute.isEmpty else { throw fail("unexpected character in start tag <\(name)", attributeAt) }
          while i < n && isSpace(bytes[i]) { advance() }
          guard i < n, bytes[i] == UInt8(ascii: "=") else { throw fail("attribute \(attribute) of <\(name)> has no value", attributeAt) }
          advance()
          while i < n && isSpace(bytes[i]) { advance() }
          guard i < n, bytes[i] == UInt8(ascii: "\"") || bytes[i] == UInt8(ascii: "'") else {
            throw fail("the value of attribute \(attribute) is not quoted", here())
          }
          let quote = bytes[i]
          i += 1  // a quote is never a line break
          let s = i
          while i < n && bytes[i] != quote { advance() }
          guard i < n else { throw fail("unterminated value of attribute \(attribute)", attributeAt) }
          attributes.append((attribute, decodeEntities(String(decoding: bytes[s..<i], as: UTF8.self))))
          advance()
        }
        let element = XMLTag(name: name, attributes: attributes, location: at)
        stack[stack.count - 1].children.append(element)
        if !selfClosing {
          guard stack.count <= maximumDepth else { throw fail("elements are nested more than \(maximumDepth) deep", at) }
          stack.append(element)
        }
      }
    }
    if stack.count > 1 {
      let open = stack[stack.count - 1]
      throw fail("element <\(open.name)> is not closed", open.location)
    }
    return root
  }

  static func decodeEntities(_ s: String) -> String {
    guard s.contains("&") else { return s }
    var out = ""
    var rest = Substring(s)
    while let amp = rest.firstIndex(of: "&") {
      out += rest[..<amp]
      let after = rest[amp...]
      guard let semi = after.prefix(12).firstIndex(of: ";") else {
        out += "&"
        rest = rest[rest.index(after: amp)...]
        continue
      }
      let name = after[after.index(after: amp)..<semi]
      var replacement: String?
      switch name {
      case "lt": replacement = "<"
      case "gt": replacement = ">"
      case "amp": replacement = "&"
      case "quot": replacement = "\""
      case "apos": replacement = "'"
      default:
        if name.hasPrefix("#x"), let v = UInt32(name.dropFirst(2), radix: 16), let u = Unicode.Scalar(v) {
          replacement = String(Character(u))
        } else if name.hasPrefix("#"), let v = UInt32(name.dropFirst()), let u = Unicode.Scalar(v) {
          replacement = String(Character(u))
        }
      }
      if let replacement {
        out += replacement
        rest = rest[rest.index(after: semi)...]
      } else {
        out += "&"
        rest = rest[rest.index(after: amp)...]
      }
    }
    return out + rest
  }
}
