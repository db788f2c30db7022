import Foundation
@testable import RooftopServer

/// Validates JSON against the OpenAPI document with Python's `jsonschema` (Draft 2020-12, the
/// dialect of OpenAPI 3.1): wire values against component schemas, and recorded HTTP answers
/// against the responses documented for their operation and status.
///
/// Cases are collected, then checked in one Python run (starting Python per value would be slow).
struct OpenAPISchemaChecker {
    /// One check.
    enum Check {
        /// `json` must (or must not) validate against `#/components/schemas/<schema>`.
        case schema(String, json: Data, valid: Bool)
        /// A response to `method path` (a document path template) with `status` and `body` (empty
        /// for none) of `mediaType` must be documented; a JSON body must validate against its
        /// schema.
        case response(method: String, path: String, status: Int, body: Data, mediaType: String = "application/json")
    }

    private(set) var cases: [(label: String, check: Check)] = []

    /// Adds a check.
    mutating func add(_ label: String, _ check: Check) {
        cases.append((label, check))
    }

    /// Adds a wire value, encoded as the server encodes, that must validate against `schema`.
    mutating func add<T: Encodable>(_ label: String, _ value: T, schema: String) throws {
        add(label, .schema(schema, json: try OpenAPITestSupport.serverEncoder.encode(value), valid: true))
    }

    /// Runs every check.
    /// - Returns: One line per failed check (empty when all pass).
    /// - Throws: When Python cannot be run or its answer cannot be read.
    func failures() async throws -> [String] {
        try await OpenAPITestSupport.withTemporaryDirectory { directory in
            let document = directory.appendingPathComponent("openapi.json")
            let casesFile = directory.appendingPathComponent("cases.json")
            let script = directory.appendingPathComponent("check.py")
            try Data(try OpenAPITestSupport.served().json).write(to: document)
            try casesJSON().write(to: casesFile)
            try Data(OpenAPISchemaChecker.script.utf8).write(to: script)
            let result = try await OpenAPITestSupport.python([script.path, document.path, casesFile.path])
            guard result.status == 0 || result.status == 1,
                let last = result.output.split(separator: "\n").last,
                let failures = try? JSONDecoder().decode([String].self, from: Data(last.utf8))
            else {
                throw CheckerError(message: "the schema checker failed (status \(result.status)):\n\(result.output)")
            }
            return failures
        }
    }

    struct CheckerError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// The cases as a JSON array, embedding the encoded bytes as they are (no re-encoding).
    private func casesJSON() -> Data {
        var text = "["
        for (index, (label, check)) in cases.enumerated() {
            if index > 0 { text += ",\n" }
            let name = OpenAPITestSupport.jsonString(label)
            switch check {
            case .schema(let schema, let json, let valid):
                text += #"{"label": \#(name), "kind": "schema", "schema": \#(OpenAPITestSupport.jsonString(schema)), "valid": \#(valid), "instance": \#(String(decoding: json, as: UTF8.self))}"#
            case .response(let method, let path, let status, let body, let mediaType):
                let isJSON = mediaType == "application/json"
                let bodyText = body.isEmpty || !isJSON ? "null" : String(decoding: body, as: UTF8.self)
                text += #"{"label": \#(name), "kind": "response", "method": \#(OpenAPITestSupport.jsonString(method)), "path": \#(OpenAPITestSupport.jsonString(path)), "status": \#(status), "hasBody": \#(!body.isEmpty), "mediaType": \#(OpenAPITestSupport.jsonString(mediaType)), "body": \#(bodyText)}"#
            }
        }
        return Data((text + "]").utf8)
    }

    /// Reads the document and the cases, prints the failures as a JSON array on the last line,
    /// exits 1 when there are any.
    static let script = #"""
        import json, sys
        from jsonschema import Draft202012Validator
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT202012

        BASE = "urn:rooftop:openapi"
        document = json.load(open(sys.argv[1]))
        cases = json.load(open(sys.argv[2]))
        registry = Registry().with_resource(BASE, Resource(contents=document, specification=DRAFT202012))

        def escape(token):
            return str(token).replace("~", "~0").replace("/", "~1")

        def errors(pointer, instance):
            validator = Draft202012Validator({"$ref": BASE + "#" + pointer}, registry=registry)
            return ["%s at %s" % (e.message[:300], "/".join(str(p) for p in e.absolute_path) or "the root")
                    for e in validator.iter_errors(instance)]

        def check_response(case):
            operation = document["paths"].get(case["path"], {}).get(case["method"])
            if operation is None:
                return ["%s %s is not documented" % (case["method"].upper(), case["path"])]
            status = str(case["status"])
            pointer = "/paths/%s/%s/responses/%s" % (escape(case["path"]), case["method"], status)
            response = operation["responses"].get(status)
            if response is None:
                return ["status %s is not documented (documented: %s)" % (status, ", ".join(operation["responses"]))]
            if "$ref" in response:
                pointer = response["$ref"][1:]
                response = document["components"]["responses"][response["$ref"].split("/")[-1]]
            media = case["mediaType"]
            content = response.get("content", {}).get(media)
            if content is None:
                return ["a %s body was sent but none is documented" % media] if case["hasBody"] else []
            if not case["hasBody"]:
                return ["no body was sent but one is documented"]
            if media != "application/json":
                return []
            return errors(pointer + "/content/" + escape(media) + "/schema", case["body"])

        failures = []
        for case in cases:
            if case["kind"] == "schema":
                found = errors("/components/schemas/" + escape(case["schema"]), case["instance"])
                if case["valid"] and found:
                    failures.append("%s: not a valid %s: %s" % (case["label"], case["schema"], "; ".join(found)))
                if not case["valid"] and not found:
                    failures.append("%s: accepted as a %s but should not be" % (case["label"], case["schema"]))
            else:
                found = check_response(case)
                if found:
                    failures.append("%s: %s %s -> %s: %s" % (
                        case["label"], case["method"].upper(), case["path"], case["status"], "; ".join(found)))
        print(json.dumps(failures))
        sys.exit(1 if failures else 0)
        """#
}
