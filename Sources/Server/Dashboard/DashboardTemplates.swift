import Mustache

/// The dashboard's pages: Mustache templates compiled into the binary (no files to ship or
/// find). Every template starts with ``DashboardHTML``'s pragma, so `{{ }}` escapes what it
/// inserts by Unicode scalar (`<`, `>`, `&`, `"`, `'`, and visible bidirectional controls), and
/// every attribute is quoted, so field names and values — user data — never become markup. The
/// only unescaped insertion, `{{{body}}}`, is a page already rendered by these templates. A section's name is looked up in
/// the enclosing contexts when the current one lacks it, so views set every name their partial
/// tests (`hasLink` false rather than absent).
enum DashboardTemplates {
    /// Every template, by name.
    static let library: MustacheLibrary = {
        _ = DashboardHTML.registered
        var library = MustacheLibrary()
        for (name, text) in templates {
            do {
                try library.register(DashboardHTML.pragma + text, named: name)
            } catch {
                // The templates are constants of this file: a parse error is a bug caught by the
                // dashboard's tests, which render every page.
                preconditionFailure("dashboard template \(name) does not parse: \(error)")
            }
        }
        return library
    }()

    /// Renders a page inside the layout.
    static func render(_ name: String, _ page: some DashboardPage, layout: DashboardLayout) -> String {
        let body = library.render(page, withTemplate: name) ?? ""
        var frame = layout
        frame.body = body
        return library.render(frame, withTemplate: "layout") ?? body
    }

    static let templates: [String: String] = [
        "layout": """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>{{title}} · Rooftop</title>
            <link rel="stylesheet" href="/dashboard/style.css">
            </head>
            <body>
            {{#signedIn}}
            <nav>
              <strong>Rooftop</strong>
              <a href="/dashboard/overview">Overview</a>
              <a href="/dashboard/datastores">Datastores</a>
              <a href="/dashboard/users">Users</a>
              <a href="/dashboard/roles">Roles</a>
              <a href="/dashboard/classes">Classes</a>
              <form method="post" action="/dashboard/logout" class="inline">
                <input type="hidden" name="csrf" value="{{csrf}}">
                <button type="submit" id="sign-out">Sign out</button>
              </form>
            </nav>
            {{/signedIn}}
            <main>
            <h1>{{title}}</h1>
            {{#notice}}<p class="notice" id="notice">{{notice}}</p>{{/notice}}
            {{#error}}<p class="error" id="error">{{error}}</p>{{/error}}
            {{{body}}}
            </main>
            </body>
            </html>
            """,
        "login": """
            <form method="post" action="/dashboard/login" class="card">
              <label>Admin key <input type="password" name="key" id="admin-key" autocomplete="off" required autofocus></label>
              <button type="submit" id="sign-in">Sign in</button>
            </form>
            <p class="hint">The key is checked once; the browser keeps a session of 30 minutes, never the key.</p>
            """,
        "overview": """
            <section class="tiles">
              <div class="tile"><span id="count-objects">{{objects}}</span> objects</div>
              <div class="tile"><span id="count-datastores">{{datastores}}</span> datastores</div>
              <div class="tile"><span id="count-users">{{users}}</span> users</div>
              <div class="tile"><span id="count-live">{{liveConnections}}</span> live connections</div>
            </section>
            <h2>Pushes and pulls per minute (this process)</h2>
            <table id="activity">
              <tr><th>minute (UTC)</th><th>pushes</th><th>pulls</th></tr>
              {{#activity}}<tr><td>{{minute}}</td><td>{{pushes}}</td><td>{{pulls}}</td></tr>{{/activity}}
            </table>
            <p class="hint">Server version {{version}}. Metrics for a scraper: <a href="/metrics">/metrics</a>.</p>
            """,
        "datastores": """
            <table id="datastores">
              <tr><th>ID</th><th>owner</th><th>title</th><th>records</th><th>size</th></tr>
              {{#datastores}}
              <tr>
                <td><a href="{{link}}">{{id}}</a></td><td>{{owner}}</td><td>{{title}}</td>
                <td>{{records}} / {{maxRecords}}</td><td>{{bytes}} / {{maxBytes}} bytes</td>
              </tr>
              {{/datastores}}
            </table>
            {{#next}}<p><a href="{{next}}" id="next-page">Next page</a></p>{{/next}}
            """,
        "datastore": """
            <dl>
              <dt>Kind</dt><dd>{{kind}}</dd>
              <dt>Owner</dt><dd>{{owner}}</dd>
              <dt>Records</dt><dd id="usage-records">{{records}} of {{maxRecords}} ({{recordsPercent}}%)</dd>
              <dt>Size</dt><dd id="usage-bytes">{{bytes}} of {{maxBytes}} bytes ({{bytesPercent}}%)</dd>
              <dt>Changes</dt><dd>{{sequence}} (<a href="{{feedLink}}" id="feed-link">tail of the change feed</a>)</dd>
            </dl>
            <h2>Classes</h2>
            <ul id="classes">{{#classes}}<li><a href="{{link}}">{{name}}</a></li>{{/classes}}{{^classes}}<li>none yet</li>{{/classes}}</ul>
            <form method="get" action="{{browseAction}}" class="inline">
              <label>Class <input name="class" required></label> <button type="submit">Browse</button>
            </form>
            {{#shareable}}
            <h2>Sharing</h2>
            <table id="sharing">
              <tr><th>principal</th><th>role</th></tr>
              {{#roles}}<tr><td>{{principal}}</td><td>{{role}}</td></tr>{{/roles}}
            </table>
            <form method="post" action="{{shareAction}}" class="card">
              <input type="hidden" name="csrf" value="{{csrf}}">
              <label>Principal <input name="principal" placeholder="* , a user ID, or role:Name" required></label>
              <label>Role <select name="role"><option>viewer</option><option>editor</option><option>none</option></select></label>
              <button type="submit" id="share">Set role</button>
            </form>
            {{/shareable}}
            """,
        "browse": """
            <p><a href="{{datastoreLink}}">{{datastore}}</a> · <a href="{{settingsLink}}">class settings</a></p>
            <form method="get" action="{{action}}" class="card">
              <label>Query <input name="q" id="query" value="{{query}}" size="60" placeholder="where score > 10 order by score desc limit 20"></label>
              <button type="submit" id="run-query">Run</button>
            </form>
            <p id="result-count">{{shown}} shown of {{total}}</p>
            <table id="objects">
              <tr><th>objectId</th><th>version</th><th>updatedAt</th>{{#columns}}<th>{{.}}</th>{{/columns}}</tr>
              {{#rows}}
              <tr>
                <td><a href="{{link}}" class="object-link">{{objectId}}</a></td><td>{{version}}</td><td>{{updatedAt}}</td>
                {{#cells}}<td>{{> value}}</td>{{/cells}}
              </tr>
              {{/rows}}
            </table>
            """,
        "value": """
            {{#present}}<span class="kind">{{kind}}</span> {{#hasLink}}<a href="{{link}}">{{text}}</a>{{/hasLink}}{{^hasLink}}{{text}}{{/hasLink}}{{#links}} <a href="{{link}}">{{text}}</a>{{/links}}{{/present}}
            """,
        "object": """
            <p><a href="{{classLink}}">{{className}}</a> in <a href="{{datastoreLink}}">{{datastore}}</a> · version {{version}} · created {{createdAt}} · updated {{updatedAt}}</p>
            <table id="fields">
              <tr><th>field</th><th>value</th></tr>
              {{#fields}}<tr><td>{{name}}</td><td>{{#value}}{{> value}}{{/value}}</td></tr>{{/fields}}
            </table>
            <p>ACL: <code>{{acl}}</code></p>
            <h2>Edit</h2>
            <p class="hint">Values in the portable JSON form (docs/model.md): <code>42</code>, <code>"text"</code>, <code>{"$date": 1763779346123}</code>, <code>{"$double": "0.5"}</code>. Changes are merged over changes made since version {{version}} by the class's merge rules.</p>
            <form method="post" action="{{saveAction}}" class="card" id="edit-form">
              <input type="hidden" name="csrf" value="{{csrf}}">
              <input type="hidden" name="baseVersion" value="{{version}}">
              {{#fields}}
              <div class="field">
                <input type="hidden" name="field" value="{{name}}">
                <input type="hidden" name="original" value="{{json}}">
                <label>{{name}} <textarea name="value" rows="1" data-field="{{name}}">{{json}}</textarea></label>
              </div>
              {{/fields}}
              <div class="field"><label>New field <input name="newField"></label> <label>value <textarea name="newValue" rows="1"></textarea></label></div>
              <p class="hint">An empty value removes the field.</p>
              <button type="submit" id="save">Save</button>
            </form>
            <form method="post" action="{{deleteAction}}" class="card">
              <input type="hidden" name="csrf" value="{{csrf}}">
              <label><input type="checkbox" name="confirm" value="yes" required> I mean to delete this object</label>
              <button type="submit" id="delete">Delete</button>
            </form>
            """,
        "feed": """
            <p><a href="{{datastoreLink}}">{{datastore}}</a> · the last {{count}} changes, newest first</p>
            <table id="feed">
              <tr><th>sequence</th><th>change</th><th>class</th><th>object</th><th>version</th></tr>
              {{#changes}}<tr><td>{{sequence}}</td><td>{{change}}</td><td>{{className}}</td><td>{{#hasLink}}<a href="{{link}}">{{objectId}}</a>{{/hasLink}}{{^hasLink}}{{objectId}}{{/hasLink}}</td><td>{{version}}</td></tr>{{/changes}}
            </table>
            """,
        "users": """
            <table id="users">
              <tr><th>user name</th><th>ID</th><th>e-mail</th><th>roles</th><th>created</th></tr>
              {{#users}}<tr><td><a href="{{link}}">{{username}}</a></td><td>{{id}}</td><td>{{email}}</td><td>{{roles}}</td><td>{{createdAt}}</td></tr>{{/users}}
            </table>
            {{#next}}<p><a href="{{next}}">Next page</a></p>{{/next}}
            <h2>Create a user</h2>
            <form method="post" action="/dashboard/users" class="card">
              <input type="hidden" name="csrf" value="{{csrf}}">
              <label>User name <input name="username" id="new-username" required></label>
              <label>Password <input type="password" name="password" id="new-password" required minlength="8"></label>
              <label>E-mail <input name="email" type="email"></label>
              <button type="submit" id="create-user">Create</button>
            </form>
            """,
        "user": """
            <dl><dt>ID</dt><dd>{{id}}</dd><dt>E-mail</dt><dd>{{email}}</dd><dt>Roles</dt><dd>{{roles}}</dd><dt>Created</dt><dd>{{createdAt}}</dd></dl>
            <h2>Sessions</h2>
            <table id="sessions">
              <tr><th>session</th><th>signed in</th><th>expires</th></tr>
              {{#sessions}}<tr><td><code>{{id}}</code></td><td>{{createdAt}}</td><td>{{expiresAt}}</td></tr>{{/sessions}}
            </table>
            <form method="post" action="{{revokeAction}}" class="inline">
              <input type="hidden" name="csrf" value="{{csrf}}">
              <button type="submit" id="revoke">End all sessions</button>
            </form>
            <h2>Set the password</h2>
            <form method="post" action="{{passwordAction}}" class="card">
              <input type="hidden" name="csrf" value="{{csrf}}">
              <label>New password <input type="password" name="password" required minlength="8"></label>
              <button type="submit" id="set-password">Set (ends the sessions)</button>
            </form>
            """,
        "roles": """
            <ul id="roles">{{#roles}}<li><a href="{{link}}">{{name}}</a></li>{{/roles}}{{^roles}}<li>none yet</li>{{/roles}}</ul>
            <h2>Create a role</h2>
            <form method="post" action="/dashboard/roles" class="card">
              <input type="hidden" name="csrf" value="{{csrf}}">
              <label>Name <input name="name" required></label>
              <button type="submit" id="create-role">Create</button>
            </form>
            """,
        "role": """
            <h2>Users</h2>
            <ul id="role-users">{{#users}}<li>{{.}}</li>{{/users}}</ul>
            <h2>Child roles</h2>
            <ul id="role-children">{{#children}}<li><a href="{{link}}">{{name}}</a></li>{{/children}}</ul>
            <p>ACL: <code>{{acl}}</code></p>
            <form method="post" action="{{updateAction}}" class="card">
              <input type="hidden" name="csrf" value="{{csrf}}">
              <label>User ID <input name="user"></label>
              <label>Child role <input name="child"></label>
              <label><select name="change"><option value="add">add</option><option value="remove">remove</option></select></label>
              <button type="submit" id="update-role">Apply</button>
            </form>
            <form method="post" action="{{deleteAction}}" class="card">
              <input type="hidden" name="csrf" value="{{csrf}}">
              <label><input type="checkbox" name="confirm" value="yes" required> I mean to delete this role</label>
              <button type="submit">Delete</button>
            </form>
            """,
        "classes": """
            <form method="get" action="/dashboard/classes" class="card">
              <label>Class <input name="name" required></label> <button type="submit">Open its settings</button>
            </form>
            """,
        "class": """
            <p class="hint">Permissions (find, get, create, update, delete, and the default ACL of new objects) and merge rules, as the REST API takes them (docs/server.md). Members left out keep their values.</p>
            <form method="post" action="{{saveAction}}" class="card">
              <input type="hidden" name="csrf" value="{{csrf}}">
              <textarea name="settings" id="settings" rows="16" cols="80">{{json}}</textarea>
              <button type="submit" id="save-settings">Save</button>
            </form>
            """,
        "message": """
            <p><a href="{{back}}">Back</a></p>
            """,
    ]

    /// The stylesheet (`/dashboard/style.css`).
    static let stylesheet = """
        body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: #1b1f24; }
        nav { display: flex; gap: 1em; align-items: center; padding: .6em 1.2em; background: #1f2937; }
        nav a, nav strong { color: #f9fafb; text-decoration: none; }
        nav form { margin-left: auto; }
        main { padding: 1em 1.6em; max-width: 1200px; }
        table { border-collapse: collapse; margin: .6em 0; }
        td, th { border: 1px solid #d0d7de; padding: .25em .5em; text-align: left; vertical-align: top; }
        .kind { font-size: 11px; color: #57606a; border: 1px solid #d0d7de; border-radius: 3px; padding: 0 .2em; }
        .tiles { display: flex; gap: 1em; }
        .tile { border: 1px solid #d0d7de; border-radius: 6px; padding: .8em 1.2em; }
        .tile span { font-size: 22px; font-weight: 600; display: block; }
        .card { border: 1px solid #d0d7de; border-radius: 6px; padding: .8em; margin: .8em 0; display: flex; flex-wrap: wrap; gap: .6em; align-items: end; }
        .inline { display: inline; }
        .field { width: 100%; }
        textarea { width: 100%; font-family: ui-monospace, monospace; }
        .notice { background: #dafbe1; padding: .5em; }
        .error { background: #ffebe9; padding: .5em; }
        .hint { color: #57606a; }
        """
}
