// Generated from Sources/RoloWeb/Templates/*.mustache and Sources/RoloWeb/Static/: do not edit.
// Regenerate with `make web-assets` (EmbeddedFilesTests with ROLO_REGENERATE=1).
// swiftlint:disable all

/// The page templates, by name (the file name without `.mustache`).
enum EmbeddedTemplates {
    static let all: [(name: String, text: String)] = [
        ("account", ##"""
<h1>Your account</h1>
{{#error}}<p class="error" role="alert" data-testid="account-error">{{.}}</p>{{/error}}
<section aria-labelledby="password-heading" class="card-section" data-testid="change-password">
  <h2 id="password-heading">Change your password</h2>
  <p class="muted">Devices that sign in with an app password keep working; any that use this password need the new one. Other browsers signed in as {{name}} are signed out.</p>
  <form method="post" action="{{base}}/account/password" class="stack" id="password-form" data-testid="password-form">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <p><label for="current-password">Current password</label><input id="current-password" name="current" type="password" required autocomplete="current-password" data-testid="current-password"></p>
    <p><label for="new-password">New password</label><input id="new-password" name="password" type="password" required minlength="{{minimumLength}}" autocomplete="new-password" aria-describedby="new-password-hint" data-testid="new-password">
      <span class="hint" id="new-password-hint">At least {{minimumLength}} characters.</span></p>
    <p><label for="confirm-password">New password again</label><input id="confirm-password" name="confirm" type="password" required minlength="{{minimumLength}}" autocomplete="new-password" data-testid="confirm-password"></p>
    <p><button type="submit" class="primary" data-testid="change-password-submit">Change password</button></p>
  </form>
</section>
{{#directory}}
<section aria-labelledby="directory-heading" class="card-section" data-testid="directory-entry">
  <h2 id="directory-heading">My card in the directory</h2>
  <p class="muted">What colleagues see of you in the organisation's directory. A box you leave empty follows your account (and the organisation's directory, where it holds the field); tick "Hide" beside a field to keep it out of your card whoever holds it.</p>
  <form method="post" action="{{action}}" enctype="multipart/form-data" class="stack" id="directory-form" data-testid="directory-form">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <p><label for="directory-name">Name</label><input id="directory-name" name="display_name" value="{{displayName}}" placeholder="{{namePlaceholder}}" autocomplete="name"></p>
    {{#offerEmail}}<p><label for="directory-email">E-mail</label><input id="directory-email" name="email" type="email" value="{{email}}" placeholder="{{emailPlaceholder}}" autocomplete="email">
      <label><input type="checkbox" name="hide_email" {{#hideEmail}}checked{{/hideEmail}} data-testid="directory-hide-email"> Hide</label></p>{{/offerEmail}}
    {{#offerPhone}}<p><label for="directory-phones">Phone numbers, one a line</label><textarea id="directory-phones" name="phones" rows="3">{{phones}}</textarea>
      <label><input type="checkbox" name="hide_phone" {{#hidePhone}}checked{{/hidePhone}} data-testid="directory-hide-phone"> Hide</label></p>{{/offerPhone}}
    {{#offerTitle}}<p><label for="directory-title">Title</label><input id="directory-title" name="title" value="{{title}}" autocomplete="organization-title">
      <label><input type="checkbox" name="hide_title" {{#hideTitle}}checked{{/hideTitle}} data-testid="directory-hide-title"> Hide</label></p>{{/offerTitle}}
    {{#offerDepartment}}<p><label for="directory-department">Department</label><input id="directory-department" name="department" value="{{department}}">
      <label><input type="checkbox" name="hide_department" {{#hideDepartment}}checked{{/hideDepartment}} data-testid="directory-hide-department"> Hide</label></p>{{/offerDepartment}}
    {{#offerOrganisation}}<p><label for="directory-organization">Organisation</label><input id="directory-organization" name="organization" value="{{organization}}" autocomplete="organization">
      <label><input type="checkbox" name="hide_organisation" {{#hideOrganisation}}checked{{/hideOrganisation}} data-testid="directory-hide-organisation"> Hide</label></p>{{/offerOrganisation}}
    {{#offerPhoto}}<p><label for="directory-photo">Photo (JPEG or PNG, at most {{maxPhotoKB}} KB){{#hasPhoto}}: one is set{{/hasPhoto}}</label><input id="directory-photo" name="photo" type="file" accept="image/jpeg,image/png" data-testid="directory-photo">
      {{#hasPhoto}}<label><input type="checkbox" name="photo_remove" data-testid="directory-photo-remove"> Remove the photo</label>{{/hasPhoto}}
      <label><input type="checkbox" name="hide_photo" {{#hidePhoto}}checked{{/hidePhoto}} data-testid="directory-hide-photo"> Hide</label></p>{{/offerPhoto}}
    {{#optOut}}<p><label><input type="checkbox" name="hidden" {{#hidden}}checked{{/hidden}} data-testid="directory-hidden"> Leave me out of the directory</label></p>{{/optOut}}
    <p><label><input type="checkbox" name="mount_hidden" {{#mountHidden}}checked{{/mountHidden}} data-testid="directory-mount-hidden"> Hide the directory from my devices</label></p>
    <p><button type="submit" class="primary" data-testid="directory-submit">Save my card</button></p>
  </form>
</section>
{{/directory}}
<section aria-labelledby="account-books-heading" class="card-section" data-testid="account-books">
  <h2 id="account-books-heading">Address books</h2>
  <table class="table" tabindex="0" data-testid="account-book-table">
    <caption class="visually-hidden">Your address books</caption>
    <thead><tr><th scope="col">Book</th><th scope="col">Contacts</th><th scope="col">Settings</th></tr></thead>
    <tbody>
    {{#books}}
      <tr data-testid="account-book-row">
        <th scope="row"><a href="{{href}}">{{name}}</a>{{#sharedBy}} <span class="badge">shared by {{.}}</span>{{/sharedBy}}</th>
        <td>{{count}}</td>
        <td><a href="{{settingsURL}}" aria-label="{{#sharedBy}}Leave{{/sharedBy}}{{^sharedBy}}Settings of{{/sharedBy}} {{name}}" data-testid="book-settings-link">{{#sharedBy}}Leave{{/sharedBy}}{{^sharedBy}}Settings{{/sharedBy}}</a></td>
      </tr>
    {{/books}}
    </tbody>
  </table>
  <p><a href="{{base}}/books/new" class="button secondary" data-testid="new-book-link">New address book</a></p>
</section>

"""##),
        ("admin-user", ##"""
<h1>User {{name}}</h1>
{{#error}}<p class="error" role="alert" data-testid="admin-error">{{.}}</p>{{/error}}
<p><a href="{{base}}/admin">← All users</a></p>
<section aria-labelledby="user-books-heading" class="card-section">
  <h2 id="user-books-heading">Address books</h2>
  <table class="table" tabindex="0" data-testid="user-books">
    <caption class="visually-hidden">Books of {{name}}</caption>
    <thead><tr><th scope="col">Book</th><th scope="col">Cards</th></tr></thead>
    <tbody>{{#books}}<tr><th scope="row">{{name}}</th><td>{{cards}}</td></tr>{{/books}}</tbody>
  </table>
  <p>Stored: {{size}}</p>
</section>
<section aria-labelledby="user-password-heading" class="card-section">
  <h2 id="user-password-heading">Reset the password</h2>
  <form method="post" action="{{userURL}}/password" class="stack">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <p><label for="reset-password">New password</label><input id="reset-password" name="password" type="password" required minlength="8" autocomplete="new-password" data-testid="reset-password"></p>
    <p><button type="submit" class="secondary" data-testid="reset-password-submit">Set password</button></p>
  </form>
</section>
<section aria-labelledby="user-state-heading" class="card-section">
  <h2 id="user-state-heading">Access</h2>
  <form method="post" action="{{userURL}}/{{#disabled}}enable{{/disabled}}{{^disabled}}disable{{/disabled}}" class="inline">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <p>{{#disabled}}This user is disabled: no password, app password or session opens the account.{{/disabled}}{{^disabled}}This user can sign in.{{/disabled}}</p>
    <button type="submit" class="secondary" data-testid="toggle-disabled">{{#disabled}}Enable{{/disabled}}{{^disabled}}Disable{{/disabled}}</button>
  </form>
</section>
{{^isSelf}}
<section aria-labelledby="user-delete-heading" class="card-section danger-zone">
  <h2 id="user-delete-heading">Delete the user</h2>
  <p>Deletes {{name}} with every address book, card and app password. This cannot be undone.</p>
  <form method="post" action="{{userURL}}/delete" class="stack" id="delete-user-form" data-testid="delete-user-form">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <p><label for="confirm-name">Type the user name to confirm</label><input id="confirm-name" name="confirm" required autocomplete="off" data-testid="delete-confirm"></p>
    <p><label for="admin-password">Your password</label><input id="admin-password" name="password" type="password" required autocomplete="current-password" data-testid="delete-admin-password"></p>
    <p><button type="submit" class="danger" data-testid="delete-user">Delete {{name}}</button></p>
  </form>
</section>
{{/isSelf}}

"""##),
        ("admin", ##"""
<h1>Server</h1>
{{#error}}<p class="error" role="alert" data-testid="admin-error">{{.}}</p>{{/error}}
<section aria-labelledby="health-heading" class="card-section" data-testid="health">
  <h2 id="health-heading">Health</h2>
  <dl class="summary">
    <div><dt>Version</dt><dd data-testid="health-version">{{health.version}}</dd></div>
    <div><dt>Database</dt><dd>{{health.databaseSize}}</dd></div>
    <div><dt>Users</dt><dd>{{health.users}}</dd></div>
    <div><dt>Address books</dt><dd>{{health.books}}</dd></div>
    <div><dt>Cards</dt><dd data-testid="health-cards">{{health.cards}}</dd></div>
  </dl>
</section>
<section aria-labelledby="users-heading" class="card-section" data-testid="users">
  <h2 id="users-heading">Users</h2>
  <table class="table" data-testid="user-table">
    <caption class="visually-hidden">Users of this server</caption>
    <thead><tr><th scope="col">User</th><th scope="col">Role</th><th scope="col">State</th><th scope="col">Books</th><th scope="col">Stored</th></tr></thead>
    <tbody>
    {{#users}}<tr data-testid="user-row"><th scope="row"><a href="{{href}}">{{name}}</a></th><td>{{role}}</td><td>{{state}}</td><td>{{books}}</td><td>{{size}}</td></tr>{{/users}}
    </tbody>
  </table>
  <form method="post" action="{{base}}/admin/users" class="stack" id="create-user-form" data-testid="create-user-form">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <h3>New user</h3>
    <p><label for="new-user">User name</label><input id="new-user" name="user" required autocomplete="off" autocapitalize="none" data-testid="new-user-name"></p>
    <p><label for="new-user-password">Password</label><input id="new-user-password" name="password" type="password" required autocomplete="new-password" minlength="8" data-testid="new-user-password"></p>
    <p><label><input type="checkbox" name="admin" value="1"> Administrator</label></p>
    <p><button type="submit" class="primary" data-testid="create-user">Create user</button></p>
  </form>
</section>

"""##),
        ("book-new", ##"""
<h1>New address book</h1>
{{#error}}<p class="error" role="alert" data-testid="book-error">{{.}}</p>{{/error}}
<form method="post" action="{{base}}/books/new" class="stack" id="new-book-form" data-testid="new-book-form">
  <input type="hidden" name="csrf" value="{{csrf}}">
  <p><label for="new-book-name">Name</label><input id="new-book-name" name="name" value="{{name}}" required maxlength="200" autocomplete="off" aria-describedby="new-book-hint" data-testid="new-book-name">
    <span class="hint" id="new-book-hint">Your devices show this name; you can change it later.</span></p>
  <p><button type="submit" class="primary" data-testid="create-book">Create</button></p>
</form>

"""##),
        ("book-settings", ##"""
<h1>Settings of {{title}}</h1>
{{#error}}<p class="error" role="alert" data-testid="book-error">{{.}}</p>{{/error}}
<p><a href="{{bookURL}}">← Back to the book</a></p>
{{#own}}
<section aria-labelledby="rename-heading" class="card-section" data-testid="rename-book-section">
  <h2 id="rename-heading">Name</h2>
  {{#canRename}}
  <form method="post" action="{{settingsURL}}" class="stack" id="rename-book-form" data-testid="rename-book-form">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <p><label for="book-name">Name</label><input id="book-name" name="name" value="{{name}}" required maxlength="200" autocomplete="off" aria-describedby="book-name-hint" data-testid="book-name">
      <span class="hint" id="book-name-hint">Your devices show the new name after their next sync; they keep syncing the same book.</span></p>
    <p><button type="submit" class="primary" data-testid="rename-book">Rename</button></p>
  </form>
  {{/canRename}}
  {{^canRename}}<p>You cannot rename this book.</p>{{/canRename}}
</section>
<section aria-labelledby="delete-book-heading" class="card-section danger-zone" data-testid="delete-book-section">
  <h2 id="delete-book-heading">Delete the book</h2>
  {{#canDelete}}
  <p>Deletes {{title}} and its {{count}}, here and on every device that syncs it. They do not go to the trash: export the book first to keep a copy.</p>
  {{#sharees}}<p>It is shared with {{.}}: they lose it too.</p>{{/sharees}}
  <form method="post" action="{{settingsURL}}/delete" class="stack" id="delete-book-form" data-testid="delete-book-form">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <p><label><input type="checkbox" name="confirm" value="yes" required data-testid="delete-book-confirm"> Yes, delete {{title}} and everything in it</label></p>
    <p><button type="submit" class="danger" data-testid="delete-book">Delete the book</button></p>
  </form>
  {{/canDelete}}
  {{^canDelete}}<p data-testid="only-book">This is your only address book: create another before you delete it.</p>{{/canDelete}}
</section>
{{/own}}
{{#shared}}
<section aria-labelledby="leave-heading" class="card-section" data-testid="leave-book-section">
  <h2 id="leave-heading">Shared with you by {{owner}}</h2>
  <p>You may {{#readOnly}}read{{/readOnly}}{{^readOnly}}read and change{{/readOnly}} its contacts. Leaving takes it off your list and your devices; {{owner}} keeps the book and can share it with you again.</p>
  <form method="post" action="{{settingsURL}}/leave" class="inline" id="leave-book-form">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <button type="submit" class="danger" data-testid="leave-book">Leave {{title}}</button>
  </form>
</section>
{{/shared}}

"""##),
        ("book", ##"""
{{<layout}}{{$body}}
<div class="app{{#hasDetail}} has-detail{{/hasDetail}}">
  <nav class="sidebar" id="sidebar" aria-label="Address books and groups" data-testid="sidebar">
    {{>nav}}
  </nav>
  <main id="main" class="content" tabindex="-1">
    <section class="list-pane" id="list" aria-labelledby="list-heading" data-testid="list-pane">
      {{>list}}
    </section>
    {{#hasDetail}}
    <div class="detail-pane" id="detail" tabindex="-1" data-testid="detail-pane">
      <p class="back-to-list"><a href="{{listURL}}">← All contacts</a></p>
      {{#contact}}{{>contact}}{{/contact}}
      {{#editor}}{{>editor}}{{/editor}}
      {{#membership}}{{>membership}}{{/membership}}
    </div>
    {{/hasDetail}}
    {{^hasDetail}}{{#list}}
    <div class="detail-pane placeholder" data-testid="no-contact">
      {{#hasRows}}<p>Choose a contact in the list to see it here.</p>{{/hasRows}}
      {{^hasRows}}<p>{{emptyText}}</p>{{/hasRows}}
      {{#book.canWrite}}<p class="actions"><a href="{{book.href}}new" class="button secondary">New contact</a> <a href="{{book.href}}import" class="button secondary">Import a file</a></p>{{/book.canWrite}}
    </div>
    {{/list}}{{/hasDetail}}
  </main>
</div>
{{/body}}{{/layout}}

"""##),
        ("contact", ##"""
<article class="contact" aria-labelledby="contact-name" data-testid="contact-view" data-etag="{{etag}}">
  <header class="contact-head">
    {{#photoURL}}<img class="photo" src="{{.}}" alt="Photo of {{displayName}}" width="96" height="96" data-testid="contact-photo">{{/photoURL}}
    {{^photoURL}}<span class="photo initials" aria-hidden="true">{{initials}}</span>{{/photoURL}}
    <div class="contact-title">
      <h2 id="contact-name" data-testid="contact-name">{{displayName}}</h2>
      {{#subtitle}}<p class="subtitle">{{.}}</p>{{/subtitle}}
      {{#isGroup}}<p class="subtitle">Group</p>{{/isGroup}}
    </div>
  </header>
  {{#actions}}
  <div class="actions" data-testid="contact-actions">
    <a class="button" href="{{editURL}}" id="edit-contact" data-testid="edit-contact">Edit</a>
    <a class="button secondary" href="{{groupsURL}}" data-testid="edit-groups">Groups</a>
    <a class="button secondary" href="{{exportURL}}" download data-testid="export-contact">Export</a>
    <form method="post" action="{{deleteURL}}" class="inline">
      <input type="hidden" name="csrf" value="{{csrf}}">
      <input type="hidden" name="etag" value="{{etag}}">
      <button type="submit" class="danger" data-testid="delete-contact">Delete</button>
    </form>
  </div>
  {{/actions}}
  {{#readOnly}}<p class="notice" data-testid="read-only-notice">Read only: {{.}}</p>{{/readOnly}}
  {{#hasFields}}
  <dl class="fields" data-testid="contact-fields">
    {{#fields}}
    <div class="field">
      <dt>{{label}}</dt>
      <dd>{{#href}}<a href="{{.}}" rel="noopener noreferrer nofollow">{{value}}</a>{{/href}}{{^href}}<span class="value">{{value}}</span>{{/href}}{{#preferred}} <span class="badge">preferred</span>{{/preferred}}</dd>
    </div>
    {{/fields}}
  </dl>
  {{/hasFields}}
  {{^hasFields}}<p class="muted">No details.</p>{{/hasFields}}
  {{#hasMembers}}
  <section aria-labelledby="members-heading" class="members">
    <h3 id="members-heading">Members</h3>
    <ul>{{#members}}<li>{{#href}}<a href="{{.}}">{{name}}</a>{{/href}}{{^href}}{{name}}{{/href}}</li>{{/members}}</ul>
  </section>
  {{/hasMembers}}
  {{#hasGroups}}
  <section aria-labelledby="contact-groups-heading" class="contact-groups">
    <h3 id="contact-groups-heading">Groups</h3>
    <ul class="chips" data-testid="contact-groups">{{#groups}}<li><a href="{{href}}">{{name}}</a></li>{{/groups}}</ul>
  </section>
  {{/hasGroups}}
  {{#history}}
  <details class="contact-history" data-testid="contact-history">
    <summary>History ({{count}})</summary>
    <table class="table" tabindex="0" data-testid="history-versions">
      <caption class="visually-hidden">Versions of this contact, newest first</caption>
      <thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What changed</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>
      {{#versions}}
        <tr data-testid="history-version">
          <th scope="row"><time datetime="{{iso}}">{{when}}</time></th>
          <td>{{user}}, {{device}}</td>
          <td data-testid="version-changes">{{changes}}</td>
          <td>{{#isCurrent}}<span class="badge">Now</span>{{/isCurrent}}{{#restore}}
            <form method="post" action="{{action}}" class="inline" id="restore-{{seq}}">
              <input type="hidden" name="csrf" value="{{csrf}}">
              <input type="hidden" name="seq" value="{{seq}}">
              <input type="hidden" name="etag" value="{{etag}}">
              <button type="submit" class="secondary" aria-label="{{label}}" data-testid="restore-version">Restore this version</button>
            </form>{{/restore}}</td>
        </tr>
      {{/versions}}
      </tbody>
    </table>
  </details>
  {{/history}}
  {{#hasRemotePhoto}}<p class="muted">This card links to a photo elsewhere; Rolo does not load it.</p>{{/hasRemotePhoto}}
</article>

"""##),
        ("duplicates", ##"""
<h1>Possible duplicates in {{bookName}}</h1>
<p class="muted">Contacts that share an e-mail address, a phone number or a name. Nothing is merged unless you choose to.</p>
{{#hasGroups}}
<ul class="duplicate-groups" data-testid="duplicate-groups">
  {{#groups}}
  <li class="duplicate-group" data-testid="duplicate-group">
    <ul>{{#cards}}<li><a href="{{href}}">{{displayName}}</a>{{#secondary}} <span class="muted">{{.}}</span>{{/secondary}}</li>{{/cards}}</ul>
    <a class="button secondary" href="{{mergeURL}}" data-testid="merge-link">Review and merge</a>
  </li>
  {{/groups}}
</ul>
{{/hasGroups}}
{{^hasGroups}}<p data-testid="no-duplicates">No duplicates found.</p>{{/hasGroups}}

"""##),
        ("editor", ##"""
<section class="editor" aria-labelledby="editor-heading" data-testid="editor">
  <h2 id="editor-heading">{{heading}}</h2>
  {{#conflict}}
  <div class="conflict" role="alert" data-testid="conflict">
    <p><strong>This contact was changed on another device since you opened it.</strong>
      Your changes are below, made again on the saved version: check them and save, or discard them.</p>
    {{#photoLost}}<p>Your new photo was not saved: choose it again.</p>{{/photoLost}}
    <div class="versions">
      <section aria-labelledby="yours-heading" class="version" data-testid="your-version">
        <h3 id="yours-heading">Your version</h3>
        <dl class="fields">{{#yours}}<div class="field"><dt>{{label}}</dt><dd>{{value}}</dd></div>{{/yours}}</dl>
      </section>
      <section aria-labelledby="saved-heading" class="version" data-testid="saved-version">
        <h3 id="saved-heading">Saved version</h3>
        <dl class="fields">{{#saved}}<div class="field"><dt>{{label}}</dt><dd>{{value}}</dd></div>{{/saved}}</dl>
      </section>
    </div>
    <p><a href="{{discardURL}}" class="button secondary" data-testid="discard-mine">Discard my changes</a></p>
  </div>
  {{/conflict}}
  {{#errors}}<p class="error" role="alert">{{.}}</p>{{/errors}}
  <form method="post" action="{{action}}" enctype="multipart/form-data" class="edit-form" id="edit-form" data-testid="edit-form">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <input type="hidden" name="etag" value="{{etag}}">
    <input type="hidden" name="base" value="{{base64}}">
    <button type="submit" name="action" value="save" hidden tabindex="-1">Save</button>
    <fieldset>
      <legend>Name</legend>
      <div class="grid">
        <p><label for="f-prefix">Prefix</label><input id="f-prefix" name="prefix" value="{{f.namePrefix}}" autocomplete="off"></p>
        <p><label for="f-given">First name</label><input id="f-given" name="given" value="{{f.givenName}}" autocomplete="off" data-testid="field-given"></p>
        <p><label for="f-middle">Middle name</label><input id="f-middle" name="middle" value="{{f.middleName}}" autocomplete="off"></p>
        <p><label for="f-family">Last name</label><input id="f-family" name="family" value="{{f.familyName}}" autocomplete="off" data-testid="field-family"></p>
        <p><label for="f-suffix">Suffix</label><input id="f-suffix" name="suffix" value="{{f.nameSuffix}}" autocomplete="off"></p>
        <p><label for="f-nickname">Nickname</label><input id="f-nickname" name="nickname" value="{{f.nickname}}" autocomplete="off"></p>
        <p class="wide"><label for="f-fn">Display name</label><input id="f-fn" name="fn" value="{{f.formattedName}}" autocomplete="off" aria-describedby="f-fn-hint" data-testid="field-fn">
          <span class="hint" id="f-fn-hint">Leave empty to make it from the names.</span></p>
      </div>
    </fieldset>
    <fieldset>
      <legend>Work</legend>
      <div class="grid">
        <p><label for="f-org">Organisation</label><input id="f-org" name="org" value="{{f.organization}}" autocomplete="off" data-testid="field-org"></p>
        <p><label for="f-department">Department</label><input id="f-department" name="department" value="{{f.department}}" autocomplete="off"></p>
        <p><label for="f-title">Job title</label><input id="f-title" name="title" value="{{f.jobTitle}}" autocomplete="off"></p>
      </div>
    </fieldset>
    {{#kinds}}
    <fieldset class="values" data-kind="{{kind}}" data-testid="values-{{kind}}">
      <legend>{{legend}}</legend>
      {{#rows}}
      <div class="value-row" data-testid="{{kind}}-row">
        <input type="hidden" name="{{kind}}-ref" value="{{ref}}">
        <p class="label-box"><label for="{{kind}}-label-{{index}}">Label</label>
          <select id="{{kind}}-label-{{index}}" name="{{kind}}-label" data-testid="{{kind}}-label">
            {{#options}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{text}}</option>{{/options}}
          </select></p>
        <p class="label-box"><label for="{{kind}}-custom-{{index}}">Custom label</label>
          <input id="{{kind}}-custom-{{index}}" name="{{kind}}-custom" value="{{custom}}" autocomplete="off" data-testid="{{kind}}-custom"></p>
        <p class="remove"><label><input type="checkbox" name="{{kind}}-remove" value="{{index}}" data-testid="{{kind}}-remove"> Remove</label></p>
        {{#isAddress}}
        <input type="hidden" name="adr-pobox" value="{{pobox}}">
        <input type="hidden" name="adr-extended" value="{{extended}}">
        <p class="street"><label for="adr-street-{{index}}">Street</label><textarea id="adr-street-{{index}}" name="adr-street" rows="2">{{street}}</textarea></p>
        <p class="part"><label for="adr-city-{{index}}">City</label><input id="adr-city-{{index}}" name="adr-city" value="{{city}}" autocomplete="off" data-testid="adr-city"></p>
        <p class="part"><label for="adr-region-{{index}}">Region</label><input id="adr-region-{{index}}" name="adr-region" value="{{region}}" autocomplete="off"></p>
        <p class="part"><label for="adr-code-{{index}}">Postal code</label><input id="adr-code-{{index}}" name="adr-code" value="{{code}}" autocomplete="off"></p>
        <p class="part"><label for="adr-country-{{index}}">Country</label><input id="adr-country-{{index}}" name="adr-country" value="{{country}}" autocomplete="off"></p>
        {{/isAddress}}
        {{^isAddress}}
        <p class="value-box"><label for="{{kind}}-value-{{index}}">{{valueLabel}}</label>
          <input id="{{kind}}-value-{{index}}" name="{{kind}}-value" value="{{value}}" type="{{inputType}}" autocomplete="off" data-testid="{{kind}}-value"></p>
        {{/isAddress}}
      </div>
      {{/rows}}
      <p><button type="submit" name="add" value="{{kind}}" class="secondary add-row" formnovalidate data-testid="add-{{kind}}">Add {{noun}}</button></p>
    </fieldset>
    {{/kinds}}
    <fieldset>
      <legend>More</legend>
      <div class="grid">
        <div class="date" role="group" aria-labelledby="bday-label" data-testid="bday">
          <p class="label" id="bday-label">Birthday</p>
          <p class="date-fields">
            <span><label for="f-bday-day">Day <span class="visually-hidden">of the birthday</span></label><input id="f-bday-day" name="bday-day" value="{{f.bdayDay}}" inputmode="numeric" size="2" maxlength="2" autocomplete="off" data-testid="bday-day"></span>
            <span><label for="f-bday-month">Month <span class="visually-hidden">of the birthday</span></label><input id="f-bday-month" name="bday-month" value="{{f.bdayMonth}}" inputmode="numeric" size="2" maxlength="2" autocomplete="off" data-testid="bday-month"></span>
            <span><label for="f-bday-year">Year <span class="visually-hidden">of the birthday</span> <span class="muted">(optional)</span></label><input id="f-bday-year" name="bday-year" value="{{f.bdayYear}}" inputmode="numeric" size="4" maxlength="4" autocomplete="off" data-testid="bday-year"></span>
          </p>
        </div>
        <p class="wide"><label for="f-categories">Categories</label><input id="f-categories" name="categories" value="{{f.categories}}" aria-describedby="f-categories-hint" autocomplete="off">
          <span class="hint" id="f-categories-hint">Separated by commas.</span></p>
        <p class="wide"><label for="f-note">Note</label><textarea id="f-note" name="note" rows="4" data-testid="field-note">{{f.note}}</textarea></p>
        <p class="wide"><label for="f-photo">Photo</label>
          <input id="f-photo" name="photo" type="file" accept="image/jpeg,image/png,image/gif,image/webp" aria-describedby="f-photo-hint" data-testid="field-photo">
          <span class="hint" id="f-photo-hint">JPEG, PNG, GIF or WebP, at most 256 KB (larger pictures are made smaller in the browser).</span></p>
        {{#hasPhoto}}<p><label><input type="checkbox" name="photo-remove" value="1"{{#photoRemove}} checked{{/photoRemove}} data-testid="photo-remove"> Remove the photo</label></p>{{/hasPhoto}}
      </div>
    </fieldset>
    <p class="form-actions">
      <button type="submit" name="action" value="save" class="primary" id="save-button" data-testid="save">Save</button>
      <a href="{{cancelURL}}" class="button secondary" id="cancel-edit" data-testid="cancel">Cancel</a>
    </p>
  </form>
</section>

"""##),
        ("error", #"""
{{<layout}}{{$body}}
<main id="main" class="narrow" tabindex="-1">
  <h1>{{heading}}</h1>
  <p data-testid="error-message">{{message}}</p>
  <p><a href="{{back}}">Back</a></p>
</main>
{{/body}}{{/layout}}

"""#),
        ("feed-created", ##"""
<h1>New feed</h1>
<section class="card-section" aria-labelledby="feed-url-heading" data-testid="feed-created">
  <h2 id="feed-url-heading">Copy its address now</h2>
  <p>{{kind}}. This address is shown once: Rolo keeps only a hash of it.</p>
  <p class="secret"><label for="feed-url">Address</label> <input id="feed-url" readonly value="{{url}}" class="mono" data-testid="feed-url"></p>
  {{#webcal}}<p><a href="{{.}}" data-testid="feed-webcal">Subscribe in your calendar app</a> (a <code>webcal://</code> link).</p>{{/webcal}}
  {{#qr}}<figure class="qr"><img src="{{src}}" alt="{{alt}}" width="{{size}}" height="{{size}}" data-testid="feed-qr">
    <figcaption>Or point a phone's camera at this code.</figcaption>
  </figure>{{/qr}}
  <p><a href="{{base}}/feeds">Done</a></p>
</section>

"""##),
        ("feeds", ##"""
<h1>Feeds</h1>
{{#error}}<p class="error" role="alert" data-testid="feeds-error">{{.}}</p>{{/error}}
<section aria-labelledby="feeds-heading" class="card-section" data-testid="feeds">
  <h2 id="feeds-heading">Your feeds</h2>
  <p class="muted">A feed is a secret address that calendar apps and desk phones read without a password: a birthday calendar, or a phone book. Anyone with the address can read the books it covers, so revoke one you no longer use.</p>
  {{#hasFeeds}}
  <table class="table" tabindex="0" data-testid="feed-table">
    <caption class="visually-hidden">Your feeds</caption>
    <thead><tr><th scope="col">Kind</th><th scope="col">Books</th><th scope="col">Created</th><th scope="col">Last read</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>
    {{#feeds}}
      <tr data-testid="feed-row">
        <th scope="row">{{kind}}</th>
        <td>{{books}}</td>
        <td><time datetime="{{createdISO}}">{{created}}</time></td>
        <td>{{lastRead}}</td>
        <td>
          <form method="post" action="{{base}}/feeds/revoke" class="inline">
            <input type="hidden" name="csrf" value="{{csrf}}">
            <input type="hidden" name="id" value="{{id}}">
            <button type="submit" class="danger" aria-label="Revoke feed {{id}}" data-testid="revoke-feed">Revoke</button>
          </form></td>
      </tr>
    {{/feeds}}
    </tbody>
  </table>
  {{/hasFeeds}}
  {{^hasFeeds}}<p data-testid="no-feeds">You have no feeds.</p>{{/hasFeeds}}
  <form method="post" action="{{base}}/feeds" class="stack" data-testid="feed-form">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <h3>New feed</h3>
    <fieldset>
      <legend>Kind</legend>
      <ul class="checks">
        {{#kinds}}<li><label><input type="radio" name="kind" value="{{value}}"{{#checked}} checked{{/checked}} data-testid="feed-kind-{{value}}"> {{label}}</label></li>{{/kinds}}
      </ul>
    </fieldset>
    <fieldset>
      <legend>Address books</legend>
      <ul class="checks">
        <li><label><input type="radio" name="books" value="all" checked> Every book I can read, also ones made or shared later</label></li>
        <li><label><input type="radio" name="books" value="some" data-testid="feed-some-books"> Only the books checked below</label></li>
        {{#books}}<li class="nested"><label><input type="checkbox" name="book" value="{{slug}}" data-testid="feed-book"> {{name}}</label></li>{{/books}}
      </ul>
    </fieldset>
    <p><button type="submit" class="primary" data-testid="create-feed">Create</button></p>
  </form>
</section>

"""##),
        ("import-csv", ##"""
<h1>Import a Google or Outlook CSV file into {{bookName}}</h1>
{{#error}}<p class="error" role="alert" data-testid="csv-error">{{.}}</p>{{/error}}
{{#result}}
<section aria-labelledby="csv-result-heading" class="import-result" data-testid="csv-result">
  <h2 id="csv-result-heading">Import finished</h2>
  <dl class="summary">
    <div><dt>Created</dt><dd data-testid="csv-created">{{created}}</dd></div>
    <div><dt>Replaced</dt><dd data-testid="csv-replaced">{{replaced}}</dd></div>
  </dl>
  <p><a href="{{bookURL}}">Back to the contacts</a></p>
</section>
{{/result}}
{{#preview}}
<section aria-labelledby="csv-preview-heading" class="card-section" data-testid="csv-preview">
  <h2 id="csv-preview-heading">Preview: nothing is imported yet</h2>
  <p data-testid="csv-detected">{{fileName}}: {{described}}; {{rowCount}} contacts, {{failureCount}} rows that cannot be read.</p>
  {{#hasFailures}}
  <table class="table" tabindex="0" data-testid="csv-failures">
    <caption>Rows that cannot be read: nothing is imported while any remain. Fix them and upload the file again.</caption>
    <thead><tr><th scope="col">Line</th><th scope="col">Reason</th></tr></thead>
    <tbody>{{#failures}}<tr><th scope="row">{{line}}</th><td>{{reason}}</td></tr>{{/failures}}</tbody>
  </table>
  {{/hasFailures}}
  <table class="table" tabindex="0" data-testid="csv-columns">
    <caption>How the columns are read</caption>
    <thead><tr><th scope="col">Column</th><th scope="col">Becomes</th></tr></thead>
    <tbody>{{#columns}}<tr><th scope="row">{{header}}</th><td>{{meaning}}</td></tr>{{/columns}}</tbody>
  </table>
  <table class="table" tabindex="0" data-testid="csv-rows">
    <caption>The first contacts</caption>
    <thead><tr><th scope="col">Line</th><th scope="col">Name</th><th scope="col">Organisation</th><th scope="col">E-mail</th><th scope="col">Phone</th></tr></thead>
    <tbody>{{#rows}}<tr><th scope="row">{{line}}</th><td>{{name}}</td><td>{{organization}}</td><td>{{email}}</td><td>{{phone}}</td></tr>{{/rows}}</tbody>
  </table>
  {{^hasFailures}}
  <form method="post" action="{{action}}" enctype="multipart/form-data" id="csv-confirm-form" data-testid="csv-confirm-form">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <input type="hidden" name="confirm" value="1">
    <input type="hidden" name="fileName" value="{{fileName}}">
    <input type="hidden" name="data" value="{{data}}">
    <p><button type="submit" class="primary" data-testid="csv-confirm">Import {{rowCount}} contacts</button> <a href="{{action}}">Choose another file</a></p>
  </form>
  {{/hasFailures}}
</section>
{{/preview}}
<form method="post" action="{{action}}" enctype="multipart/form-data" class="stack" id="csv-form" data-testid="csv-form">
  <input type="hidden" name="csrf" value="{{csrf}}">
  <p><label for="csv-file">CSV file exported by Google Contacts or Outlook (English or German; at most 10 MB)</label>
    <input id="csv-file" name="file" type="file" accept=".csv,text/csv" required data-testid="csv-file"></p>
  <p class="muted">You see how its columns are read and its first contacts before anything is imported. Contacts already imported from the same rows are replaced, not copied.</p>
  <p><button type="submit" class="secondary" data-testid="csv-upload">Preview</button></p>
</form>

"""##),
        ("import", ##"""
<h1>Import into {{bookName}}</h1>
{{#error}}<p class="error" role="alert">{{.}}</p>{{/error}}
{{#result}}
<section aria-labelledby="import-result-heading" class="import-result" data-testid="import-result">
  <h2 id="import-result-heading">Import finished</h2>
  <dl class="summary">
    <div><dt>Created</dt><dd data-testid="import-created">{{created}}</dd></div>
    <div><dt>Updated</dt><dd data-testid="import-updated">{{updated}}</dd></div>
    <div><dt>Skipped</dt><dd data-testid="import-skipped">{{skipped}}</dd></div>
    <div><dt>Failed</dt><dd data-testid="import-failed">{{failed}}</dd></div>
  </dl>
  {{#hasFailures}}
  <table class="table" tabindex="0" data-testid="import-failures">
    <caption>Cards that were not imported</caption>
    <thead><tr><th scope="col">Card</th><th scope="col">Reason</th></tr></thead>
    <tbody>{{#failures}}<tr><th scope="row">{{card}}</th><td>{{reason}}</td></tr>{{/failures}}</tbody>
  </table>
  {{/hasFailures}}
  <p><a href="{{bookURL}}">Back to the contacts</a></p>
</section>
{{/result}}
<form method="post" action="{{action}}" enctype="multipart/form-data" class="stack" id="import-form" data-testid="import-form">
  <input type="hidden" name="csrf" value="{{csrf}}">
  <p><label for="import-file">vCard file (.vcf, at most 50 MB)</label>
    <input id="import-file" name="file" type="file" accept=".vcf,text/vcard,text/x-vcard" required data-testid="import-file"></p>
  <fieldset>
    <legend>When a card's UID is already in the book</legend>
    <ul class="checks">
      <li><label><input type="radio" name="collision" value="skip" checked data-testid="collision-skip"> Skip it</label></li>
      <li><label><input type="radio" name="collision" value="replace" data-testid="collision-replace"> Replace the card in the book</label></li>
      <li><label><input type="radio" name="collision" value="both" data-testid="collision-both"> Keep both (the imported one gets a new UID)</label></li>
    </ul>
  </fieldset>
  <p><progress id="import-progress" max="100" value="0" aria-label="Upload progress" hidden>0%</progress></p>
  <p><button type="submit" class="primary" data-testid="import-submit">Import</button></p>
</form>

"""##),
        ("layout", ##"""
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="same-origin">
<title>{{title}} · Rolo</title>
<link rel="stylesheet" href="{{assets.css}}">
<link rel="icon" href="data:,">
<script src="{{assets.js}}" defer></script>
</head>
<body class="{{bodyClass}}" data-base="{{base}}">
<a class="skip-link" href="#main">Skip to main content</a>
{{#hasDetail}}<a class="skip-link" href="#detail">Skip to contact</a>{{/hasDetail}}
<header class="banner">
  <a class="brand" href="{{base}}/" data-testid="home-link">Rolo</a>
  {{#search}}
  <form class="search" role="search" method="get" action="{{action}}" id="search-form" data-testid="search-form">
    <label for="q" class="visually-hidden">Search contacts</label>
    <input type="search" id="q" name="q" value="{{q}}" placeholder="Search contacts" autocomplete="off" spellcheck="false" data-testid="search-input">
    {{#group}}<input type="hidden" name="group" value="{{.}}">{{/group}}
    {{#category}}<input type="hidden" name="category" value="{{.}}">{{/category}}
    <button type="submit" class="search-button">Search</button>
  </form>
  {{/search}}
  {{#user}}
  <nav class="account" aria-label="Account">
    <ul>
      <li><a href="{{base}}/account" data-testid="account-link"{{#onAccount}} aria-current="page"{{/onAccount}}>Account</a></li>
      <li><a href="{{base}}/privacy" data-testid="privacy-link"{{#onPrivacy}} aria-current="page"{{/onPrivacy}}>Privacy</a></li>
      <li><a href="{{base}}/feeds" data-testid="feeds-link"{{#onFeeds}} aria-current="page"{{/onFeeds}}>Feeds</a></li>
      {{#admin}}<li><a href="{{base}}/admin" data-testid="admin-link"{{#onAdmin}} aria-current="page"{{/onAdmin}}>Admin</a></li>{{/admin}}
      <li><button type="button" class="link-button" id="help-button" data-testid="help-button" hidden>Shortcuts</button></li>
      <li>
        <form method="post" action="{{base}}/logout" class="inline">
          <input type="hidden" name="csrf" value="{{csrf}}">
          <button type="submit" class="link-button" data-testid="sign-out">Sign out <span class="who">{{name}}</span></button>
        </form>
      </li>
    </ul>
  </nav>
  {{/user}}
</header>
{{#flash}}<div class="flash {{kind}}" role="status" data-testid="flash">
  <p>{{text}}</p>
  {{#undo}}<form method="post" action="{{action}}" class="inline">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <input type="hidden" name="batch" value="{{batch}}">
    <button type="submit" data-testid="undo">Undo</button>
  </form>{{/undo}}
</div>{{/flash}}
{{$body}}{{/body}}
{{#user}}
<dialog id="help-dialog" aria-labelledby="help-title">
  <h2 id="help-title">Keyboard shortcuts</h2>
  <dl class="shortcuts">
    <div><dt><kbd>/</kbd></dt><dd>Search</dd></div>
    <div><dt><kbd>j</kbd> <kbd>k</kbd> or <kbd>↓</kbd> <kbd>↑</kbd></dt><dd>Next or previous contact</dd></div>
    <div><dt><kbd>Enter</kbd></dt><dd>Open the contact</dd></div>
    <div><dt><kbd>e</kbd></dt><dd>Edit the contact</dd></div>
    <div><dt><kbd>n</kbd></dt><dd>New contact</dd></div>
    <div><dt><kbd>Ctrl</kbd>+<kbd>S</kbd> or <kbd>⌘</kbd>+<kbd>S</kbd></dt><dd>Save</dd></div>
    <div><dt><kbd>Esc</kbd></dt><dd>Cancel or close</dd></div>
    <div><dt><kbd>?</kbd></dt><dd>This help</dd></div>
  </dl>
  <p><label><input type="checkbox" id="single-key-shortcuts" data-testid="single-key-toggle"> Single-key shortcuts (<kbd>/</kbd>, <kbd>j</kbd>, <kbd>k</kbd>, <kbd>e</kbd>, <kbd>n</kbd>, <kbd>?</kbd>)</label></p>
  <form method="dialog"><button type="submit">Close</button></form>
</dialog>
{{/user}}
</body>
</html>

"""##),
        ("list", ##"""
<div class="list-head">
  <h1 id="list-heading">{{list.title}}</h1>
  <p class="count" id="result-count" role="status" aria-live="polite" data-testid="result-count">{{list.countText}}</p>
  {{#book.canWrite}}<a class="button" href="{{book.href}}new" id="new-contact" data-testid="new-contact">New contact</a>{{/book.canWrite}}
</div>
<nav class="letters" aria-label="Jump to a letter" data-testid="letters">
  <ul>{{#list.letters}}<li><a href="{{href}}"{{#current}} aria-current="true"{{/current}} aria-label="Names starting with {{label}}">{{label}}</a></li>{{/list.letters}}</ul>
</nav>
<form method="get" action="{{book.href}}export" id="selection-form" class="selection">
  <ul class="rows" id="rows" data-testid="contact-list">
    {{>rows}}
  </ul>
  {{#list.hasRows}}<p class="selection-actions"><button type="submit" class="secondary" data-testid="export-selection">Export selected</button></p>{{/list.hasRows}}
</form>
<nav class="pager" aria-label="More contacts" data-testid="pager">
  {{#list.previousURL}}<a rel="prev" href="{{.}}" id="previous-page" data-testid="previous-page">Previous</a>{{/list.previousURL}}
  {{#list.nextURL}}<a rel="next" href="{{.}}" id="next-page" data-testid="next-page">Next</a>{{/list.nextURL}}
</nav>

"""##),
        ("login-flow", ##"""
{{<layout}}{{$body}}
<main id="main" class="narrow" tabindex="-1">
  <h1>Connect a device</h1>
  {{#pending}}
  <p data-testid="login-flow-client">The app <strong>{{client}}</strong> asks for access to your contacts as <strong>{{name}}</strong>.
    Granting makes an app password named after it, which you can revoke on the Privacy page.</p>
  <form method="post" action="{{base}}/login-flow/{{loginID}}" class="stack" id="login-flow-form" data-testid="login-flow-form">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <p><button type="submit" class="primary" data-testid="login-flow-grant">Grant access</button>
      <a href="{{base}}/" data-testid="login-flow-cancel">Cancel</a></p>
  </form>
  {{/pending}}
  {{#granted}}<p data-testid="login-flow-granted">Access granted to <strong>{{client}}</strong>. You can close this window and go back to the app.</p>{{/granted}}
  {{#gone}}<p data-testid="login-flow-gone">This sign-in request has expired or was already used. Start again in the app.</p>{{/gone}}
</main>
{{/body}}{{/layout}}

"""##),
        ("login", ##"""
{{<layout}}{{$body}}
<main id="main" class="narrow" tabindex="-1">
  <h1>Sign in to Rolo</h1>
  {{#error}}<p class="error" role="alert" id="login-error" data-testid="login-error">{{.}}</p>{{/error}}
  <form method="post" action="{{base}}/login" class="stack" id="login-form" data-testid="login-form">
    <input type="hidden" name="csrf" value="{{loginToken}}">
    <input type="hidden" name="next" value="{{next}}">
    <p><label for="user">User name</label>
      <input id="user" name="user" autocomplete="username" autocapitalize="none" spellcheck="false" required value="{{userName}}" data-testid="login-user"></p>
    <p><label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="current-password" required data-testid="login-password"></p>
    <p><button type="submit" class="primary" data-testid="login-submit">Sign in</button></p>
  </form>
  {{#signOn}}
  <p class="sign-on"><a class="button" href="{{base}}/login/oidc{{#next}}?next={{next}}{{/next}}" data-testid="login-oidc">Sign in with {{name}}</a></p>
  {{/signOn}}
</main>
{{/body}}{{/layout}}

"""##),
        ("membership", ##"""
<section class="membership" aria-labelledby="membership-heading" data-testid="membership">
  <h2 id="membership-heading">Groups of {{displayName}}</h2>
  {{#error}}<p class="error" role="alert">{{.}}</p>{{/error}}
  <form method="post" action="{{action}}" class="stack" id="membership-form" data-testid="membership-form">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <input type="hidden" name="etag" value="{{etag}}">
    <fieldset>
      <legend>Group cards</legend>
      {{#hasGroupCards}}
      <ul class="checks">
        {{#groupCards}}<li><label><input type="checkbox" name="group" value="{{name}}"{{#checked}} checked{{/checked}} data-testid="group-{{name}}"> {{displayName}}</label>
          <input type="hidden" name="group-etag" value="{{name}} {{etag}}"></li>{{/groupCards}}
      </ul>
      {{/hasGroupCards}}
      {{^hasGroupCards}}<p class="muted">This book has no group cards.</p>{{/hasGroupCards}}
      <p><label for="new-group">New group card</label><input id="new-group" name="new-group" autocomplete="off" data-testid="new-group"></p>
    </fieldset>
    <fieldset>
      <legend>Categories</legend>
      {{#hasCategories}}
      <ul class="checks">
        {{#categories}}<li><label><input type="checkbox" name="category" value="{{name}}"{{#checked}} checked{{/checked}}> {{name}}</label></li>{{/categories}}
      </ul>
      {{/hasCategories}}
      <p><label for="new-category">Add a category</label><input id="new-category" name="new-category" autocomplete="off" data-testid="new-category"></p>
    </fieldset>
    <p class="form-actions">
      <button type="submit" class="primary" data-testid="save-groups">Save</button>
      <a href="{{cancelURL}}" class="button secondary">Cancel</a>
    </p>
  </form>
</section>

"""##),
        ("merge", ##"""
<h1>Merge contacts</h1>
{{#error}}<p class="error" role="alert">{{.}}</p>{{/error}}
<form method="get" action="{{formAction}}" class="stack" id="survivor-form" data-testid="survivor-form">
  {{#cards}}<input type="hidden" name="c" value="{{name}}">{{/cards}}
  <fieldset>
    <legend>Which contact stays?</legend>
    <p class="muted">The others are moved to the trash and their values added to it. You can undo the merge.</p>
    <ul class="checks">
      {{#cards}}<li><label><input type="radio" name="survivor" value="{{name}}"{{#isSurvivor}} checked{{/isSurvivor}}> {{displayName}} <span class="muted">{{summary}}</span></label></li>{{/cards}}
    </ul>
    <button type="submit" class="secondary">Use this one</button>
  </fieldset>
</form>
<form method="post" action="{{formAction}}" class="stack" id="merge-form" data-testid="merge-form">
  <input type="hidden" name="csrf" value="{{csrf}}">
  <input type="hidden" name="survivor" value="{{survivor}}">
  {{#cards}}<input type="hidden" name="c" value="{{name}}"><input type="hidden" name="etag" value="{{etag}}">{{/cards}}
  {{#conflicts}}
  <fieldset data-testid="conflict-{{property}}">
    <legend>{{label}}</legend>
    <ul class="checks">
      {{#options}}<li><label><input type="radio" name="choice-{{property}}" value="{{card}}"{{#checked}} checked{{/checked}}> {{value}} <span class="muted">({{from}})</span></label></li>{{/options}}
    </ul>
  </fieldset>
  {{/conflicts}}
  {{^conflicts}}<p>The contacts do not disagree on any single value.</p>{{/conflicts}}
  <h2>The merged contact keeps</h2>
  <dl class="fields" data-testid="merge-preview">{{#preview}}<div class="field"><dt>{{label}}</dt><dd>{{value}}</dd></div>{{/preview}}</dl>
  <p class="form-actions"><button type="submit" class="primary" data-testid="merge-submit">Merge</button>
    <a class="button secondary" href="{{cancelURL}}">Cancel</a></p>
</form>

"""##),
        ("nav", ##"""
<h2 class="nav-heading" id="books-heading">Address books</h2>
<ul class="books" aria-labelledby="books-heading">
  {{#books}}
  <li class="book{{#current}} current{{/current}}">
    <a href="{{href}}"{{#current}} aria-current="page"{{/current}} data-testid="book-{{slug}}">{{name}}</a>
    {{#shared}}<span class="badge" title="Shared by {{owner}}">{{owner}} · {{access}}</span>{{/shared}}
  </li>
  {{/books}}
  <li class="new-book"><a href="{{base}}/books/new" data-testid="nav-new-book">+ New address book</a></li>
</ul>
{{#book}}
<h2 class="nav-heading" id="groups-heading">Groups</h2>
<ul class="groups" aria-labelledby="groups-heading" data-testid="groups">
  <li><a href="{{href}}"{{#allCurrent}} aria-current="page"{{/allCurrent}}>All contacts</a></li>
  {{#groups}}<li><a href="{{href}}"{{#current}} aria-current="page"{{/current}}>{{name}}</a></li>{{/groups}}
  {{#categories}}<li><a href="{{href}}"{{#current}} aria-current="page"{{/current}}>{{name}} <span class="kind">category</span></a></li>{{/categories}}
</ul>
<h2 class="nav-heading" id="tools-heading">This book</h2>
<ul class="tools" aria-labelledby="tools-heading">
  {{#canWrite}}<li><a href="{{href}}new" data-testid="nav-new">New contact</a></li>{{/canWrite}}
  {{#canWrite}}<li><a href="{{href}}import" data-testid="nav-import">Import</a></li>{{/canWrite}}
  {{#canWrite}}<li><a href="{{href}}import-csv" data-testid="nav-import-csv">Import Google or Outlook CSV</a></li>{{/canWrite}}
  <li><a href="{{href}}export" data-testid="nav-export" download>Export all</a></li>
  <li><a href="{{href}}export-csv?format=google" data-testid="nav-export-google" download>Export as Google CSV</a></li>
  <li><a href="{{href}}export-csv?format=outlook" data-testid="nav-export-outlook" download>Export as Outlook CSV</a></li>
  {{#canWrite}}<li><a href="{{href}}duplicates" data-testid="nav-duplicates">Duplicates</a></li>{{/canWrite}}
  {{#canWrite}}<li><a href="{{href}}trash" data-testid="nav-trash">Trash</a></li>{{/canWrite}}
  <li><a href="{{href}}settings" data-testid="nav-book-settings">{{#shared}}Leave or settings{{/shared}}{{^shared}}Rename or delete{{/shared}}</a></li>
</ul>
{{/book}}

"""##),
        ("page", ##"""
{{<layout}}{{$body}}
<div class="app page">
  {{#hasSidebar}}<nav class="sidebar" id="sidebar" aria-label="Address books and groups" data-testid="sidebar">
    {{>nav}}
  </nav>{{/hasSidebar}}
  <main id="main" class="content single" tabindex="-1">
    {{#trash}}{{>trash}}{{/trash}}
    {{#duplicates}}{{>duplicates}}{{/duplicates}}
    {{#merge}}{{>merge}}{{/merge}}
    {{#importPage}}{{>import}}{{/importPage}}
    {{#csvImport}}{{>import-csv}}{{/csvImport}}
    {{#privacyPage}}{{>privacy}}{{/privacyPage}}
    {{#adminPage}}{{>admin}}{{/adminPage}}
    {{#adminUser}}{{>admin-user}}{{/adminUser}}
    {{#newPassword}}{{>token-created}}{{/newPassword}}
    {{#feedsPage}}{{>feeds}}{{/feedsPage}}
    {{#newFeed}}{{>feed-created}}{{/newFeed}}
    {{#accountPage}}{{>account}}{{/accountPage}}
    {{#newBook}}{{>book-new}}{{/newBook}}
    {{#bookSettings}}{{>book-settings}}{{/bookSettings}}
    {{#undoChanges}}{{>undo-changes}}{{/undoChanges}}
    {{#noBook}}<h1>No address book</h1>
    <p>You have no address book yet. <a href="{{base}}/books/new" data-testid="first-book-link">Create one</a>, or accept a book someone shares with you on the <a href="{{base}}/privacy">privacy page</a>.</p>{{/noBook}}
  </main>
</div>
{{/body}}{{/layout}}

"""##),
        ("privacy", ##"""
<h1>Privacy and devices</h1>
{{#error}}<p class="error" role="alert" data-testid="privacy-error">{{.}}</p>{{/error}}
<section aria-labelledby="tokens-heading" class="card-section" data-testid="app-passwords">
  <h2 id="tokens-heading">App passwords</h2>
  <p class="muted">Give each device its own password: you can see where it was last used and revoke it alone.</p>
  {{#hasTokens}}
  <table class="table" tabindex="0" data-testid="token-table">
    <caption class="visually-hidden">Your app passwords</caption>
    <thead><tr><th scope="col">Name</th><th scope="col">Access</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>
    {{#tokens}}
      <tr data-testid="token-row">
        <th scope="row">{{name}}</th>
        <td>{{access}}</td>
        <td><time datetime="{{createdISO}}">{{created}}</time></td>
        <td>{{lastUsed}}</td>
        <td>{{#revoked}}Revoked {{.}}{{/revoked}}{{^revoked}}
          <form method="post" action="{{base}}/privacy/tokens/revoke" class="inline">
            <input type="hidden" name="csrf" value="{{csrf}}">
            <input type="hidden" name="name" value="{{name}}">
            <button type="submit" class="danger" aria-label="Revoke {{name}}" data-testid="revoke-token">Revoke</button>
          </form>{{/revoked}}</td>
      </tr>
    {{/tokens}}
    </tbody>
  </table>
  {{/hasTokens}}
  <form method="post" action="{{base}}/privacy/tokens" class="stack" id="token-form" data-testid="token-form">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <h3 id="add-device">Add a device</h3>
    <p><label for="token-name">Device name</label><input id="token-name" name="name" required autocomplete="off" placeholder="Anna's iPhone" data-testid="token-name"></p>
    <fieldset>
      <legend>Device</legend>
      <ul class="checks">
        <li><label><input type="radio" name="device" value="apple" data-testid="device-apple"> iPhone, iPad or Mac: a configuration profile</label></li>
        <li><label><input type="radio" name="device" value="other" data-testid="device-other"> Android (DAVx5) or another app: the address, user name and password</label></li>
      </ul>
    </fieldset>
    <fieldset>
      <legend>Access</legend>
      <ul class="checks">
        <li><label><input type="radio" name="scope" value="read-write" checked> Read and write</label></li>
        <li><label><input type="radio" name="scope" value="read-only" data-testid="token-read-only"> Read only</label></li>
      </ul>
    </fieldset>
    <fieldset>
      <legend>Address books</legend>
      <ul class="checks">
        <li><label><input type="radio" name="books" value="all" checked> Every book, also ones made later</label></li>
        <li><label><input type="radio" name="books" value="some"> Only the books checked below</label></li>
        {{#books}}<li class="nested"><label><input type="checkbox" name="book" value="{{slug}}"> {{name}}</label></li>{{/books}}
      </ul>
    </fieldset>
    <p><button type="submit" class="primary" data-testid="create-token">Create</button></p>
  </form>
</section>

<section aria-labelledby="shares-heading" class="card-section" data-testid="shares">
  <h2 id="shares-heading">Shared address books</h2>
  <h3>Shared with you</h3>
  {{#hasReceived}}
  <ul class="share-list" data-testid="shares-received">
    {{#received}}
    <li>
      <strong>{{bookName}}</strong> from {{owner}}, {{access}}{{#pending}} — waiting for you{{/pending}}
      {{#pending}}<form method="post" action="{{base}}/privacy/shares/accept" class="inline">
        <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="owner" value="{{owner}}"><input type="hidden" name="book" value="{{book}}">
        <button type="submit" data-testid="accept-share" aria-label="Accept {{bookName}} from {{owner}}">Accept</button>
      </form>{{/pending}}
      <form method="post" action="{{base}}/privacy/shares/remove" class="inline">
        <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="owner" value="{{owner}}"><input type="hidden" name="book" value="{{book}}"><input type="hidden" name="sharee" value="{{sharee}}">
        <button type="submit" class="secondary" aria-label="{{#pending}}Decline{{/pending}}{{^pending}}Leave{{/pending}} {{bookName}} from {{owner}}">{{#pending}}Decline{{/pending}}{{^pending}}Leave{{/pending}}</button>
      </form>
    </li>
    {{/received}}
  </ul>
  {{/hasReceived}}
  {{^hasReceived}}<p class="muted">No one shares a book with you.</p>{{/hasReceived}}
  <h3>Shared by you</h3>
  {{#hasGiven}}
  <ul class="share-list" data-testid="shares-given">
    {{#given}}
    <li>
      <strong>{{bookName}}</strong> with {{sharee}}{{#pending}} (not accepted yet){{/pending}}
      <form method="post" action="{{base}}/privacy/shares" class="inline">
        <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="book" value="{{book}}"><input type="hidden" name="sharee" value="{{sharee}}">
        <label for="access-{{id}}" class="visually-hidden">Access of {{sharee}} to {{bookName}}</label>
        <select id="access-{{id}}" name="access">
          <option value="read"{{#readOnly}} selected{{/readOnly}}>Read only</option>
          <option value="read-write"{{^readOnly}} selected{{/readOnly}}>Read and write</option>
        </select>
        <button type="submit" class="secondary">Change</button>
      </form>
      <form method="post" action="{{base}}/privacy/shares/remove" class="inline">
        <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="owner" value="{{owner}}"><input type="hidden" name="book" value="{{book}}"><input type="hidden" name="sharee" value="{{sharee}}">
        <button type="submit" class="danger" aria-label="Stop sharing {{bookName}} with {{sharee}}">Stop sharing</button>
      </form>
    </li>
    {{/given}}
  </ul>
  {{/hasGiven}}
  {{^hasGiven}}<p class="muted">You share no book.</p>{{/hasGiven}}
  <form method="post" action="{{base}}/privacy/shares" class="stack" id="share-form" data-testid="share-form">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <h3>Share a book</h3>
    <p><label for="share-book">Book</label><select id="share-book" name="book">{{#ownBooks}}<option value="{{slug}}">{{name}}</option>{{/ownBooks}}</select></p>
    <p><label for="share-sharee">With user</label><input id="share-sharee" name="sharee" required autocomplete="off" data-testid="share-sharee"></p>
    <p><label for="share-access">Access</label><select id="share-access" name="access"><option value="read">Read only</option><option value="read-write">Read and write</option></select></p>
    <p><button type="submit" class="primary">Share</button></p>
  </form>
</section>

<section aria-labelledby="history-heading" class="card-section" data-testid="access-history">
  <h2 id="history-heading">Access history (30 days)</h2>
  {{#hasDevices}}
  <div class="charts">
    {{#devices}}
    <figure class="chart" data-testid="device-chart">
      <figcaption>{{name}}: {{total}} requests</figcaption>
      <svg viewBox="0 0 {{width}} {{height}}" width="{{width}}" height="{{height}}" role="img" aria-label="Requests per day by {{name}} over 30 days, {{total}} in all">
        <line x1="0" y1="{{baseline}}" x2="{{width}}" y2="{{baseline}}" class="axis"/>
        {{#bars}}<rect x="{{x}}" y="{{y}}" width="{{w}}" height="{{h}}"><title>{{day}}: {{count}}</title></rect>{{/bars}}
      </svg>
    </figure>
    {{/devices}}
  </div>
  <table class="table" tabindex="0" data-testid="history-table">
    <caption class="visually-hidden">Requests per device, book and hour or day</caption>
    <thead><tr><th scope="col">When</th><th scope="col">Device</th><th scope="col">Book</th><th scope="col">Requests</th><th scope="col">Cards read</th><th scope="col">Written</th><th scope="col">Deleted</th><th scope="col">Changes</th></tr></thead>
    <tbody>
    {{#history}}<tr><td><time datetime="{{iso}}">{{day}}</time></td><th scope="row">{{device}}</th><td>{{book}}</td><td>{{requests}}</td><td>{{read}}{{#full}} (whole book){{/full}}</td><td>{{written}}</td><td>{{deleted}}</td><td>{{#changes}}<a href="{{url}}" aria-label="What did {{device}} change in {{book}} since then" data-testid="device-changes">What changed</a> · <a href="{{undoURL}}" aria-label="Undo what {{device}} did in {{book}} since then" data-testid="device-undo">Undo</a>{{/changes}}</td></tr>{{/history}}
    </tbody>
  </table>
  {{/hasDevices}}
  {{^hasDevices}}<p class="muted">No requests in the last 30 days.</p>{{/hasDevices}}
</section>

"""##),
        ("rows", ##"""
{{#list.rows}}
<li class="row{{#current}} current{{/current}}" data-name="{{name}}" data-testid="contact-row">
  <input type="checkbox" name="c" value="{{name}}" aria-label="Select {{displayName}}" class="select">
  <a href="{{href}}" class="row-link"{{#current}} aria-current="page"{{/current}}>
    {{#photoURL}}<img src="{{.}}" alt="" width="40" height="40" loading="lazy" decoding="async" class="avatar">{{/photoURL}}
    {{^photoURL}}<span class="avatar initials" aria-hidden="true">{{initials}}</span>{{/photoURL}}
    <span class="row-text"><span class="row-name">{{displayName}}</span>{{#secondary}}<span class="row-sub">{{.}}</span>{{/secondary}}</span>
  </a>
</li>
{{/list.rows}}
{{^list.hasRows}}<li class="empty" data-testid="empty-list">{{list.emptyText}}</li>{{/list.hasRows}}

"""##),
        ("token-created", ##"""
<h1>App password for {{name}}</h1>
<section class="card-section" aria-labelledby="secret-heading" data-testid="token-created">
  <h2 id="secret-heading">Copy it now</h2>
  <p>This password is shown once. Enter it on the device with your user name <strong>{{user}}</strong> and the server address <code>{{serverURL}}</code>.</p>
  <p class="secret"><label for="secret">Password</label> <input id="secret" readonly value="{{secret}}" class="mono" data-testid="token-secret"></p>
  {{#apple}}
  <h3>iPhone, iPad or Mac</h3>
  <p class="muted" data-testid="profile-hint">Download a configuration profile and open it on the device: it sets the account up with this password.{{#signed}} The profile is signed, so the device shows it as verified.{{/signed}}</p>
  <form method="post" action="{{base}}/privacy/mobileconfig" class="inline">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <input type="hidden" name="name" value="{{name}}">
    <input type="hidden" name="secret" value="{{secret}}">
    <button type="submit" class="secondary" data-testid="download-mobileconfig">Download .mobileconfig</button>
  </form>
  {{#qr}}<figure class="qr"><img src="{{src}}" alt="{{alt}}" width="{{size}}" height="{{size}}" data-testid="profile-qr">
    <figcaption>Or point the iPhone's or iPad's camera at this code, or open <code data-testid="profile-link">{{link}}</code> on the device: it gives the profile once, within ten minutes.</figcaption>
  </figure>{{/qr}}
  {{/apple}}
  {{#other}}
  <h3>Android (DAVx5) and other apps</h3>
  <p>Add a CardDAV account with the address <code data-testid="dav-url">{{davURL}}</code>, the user name <strong>{{user}}</strong> and the password above. Apps that offer to log in with the browser can use that instead.</p>
  {{#qr}}<figure class="qr"><img src="{{src}}" alt="{{alt}}" width="{{size}}" height="{{size}}" data-testid="davx5-qr">
    <figcaption>With DAVx5 installed, scan this code with the phone's camera: DAVx5 opens with the address and your user name filled in (<code>{{link}}</code>). Paste the password.</figcaption>
  </figure>{{/qr}}
  {{/other}}
  <p><a href="{{base}}/privacy">Done</a></p>
</section>

"""##),
        ("trash", ##"""
<h1>Trash of {{bookName}}</h1>
<p class="muted">Deleted and merged contacts stay here for 30 days. Restoring puts the same card back; phones see it as new.</p>
{{#hasEntries}}
<table class="table" data-testid="trash-table">
  <caption class="visually-hidden">Contacts in the trash</caption>
  <thead><tr><th scope="col">Name</th><th scope="col">Why</th><th scope="col">When</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>
  {{#entries}}
    <tr data-testid="trash-row">
      <th scope="row">{{displayName}}</th>
      <td>{{reason}}</td>
      <td><time datetime="{{iso}}">{{when}}</time></td>
      <td>
        <form method="post" action="{{restoreURL}}" class="inline">
          <input type="hidden" name="csrf" value="{{csrf}}">
          <input type="hidden" name="id" value="{{id}}">
          <button type="submit" data-testid="restore" aria-label="Restore {{displayName}}">Restore</button>
        </form>
        {{#undoBatch}}<form method="post" action="{{undoURL}}" class="inline">
          <input type="hidden" name="csrf" value="{{csrf}}">
          <input type="hidden" name="batch" value="{{.}}">
          <button type="submit" class="secondary" aria-label="Undo the merge of {{displayName}}">Undo merge</button>
        </form>{{/undoBatch}}
      </td>
    </tr>
  {{/entries}}
  </tbody>
</table>
{{/hasEntries}}
{{^hasEntries}}<p data-testid="trash-empty">The trash is empty.</p>{{/hasEntries}}

"""##),
        ("undo-changes", ##"""
<h1>Undo changes in {{bookName}}</h1>
<p class="muted">Puts the book back as it was at a time, or takes back what one device did since then. Each card goes back by a new change, so every phone and computer gets it at its next sync. You see the plan first; nothing changes until you confirm.</p>
{{#error}}<p class="error" role="alert" data-testid="undo-error">{{.}}</p>{{/error}}
<form method="get" action="{{action}}" class="stack" id="undo-plan-form" data-testid="undo-plan-form">
  <p><label for="undo-to">Undo the changes made after (UTC, ISO 8601)</label>
    <input id="undo-to" name="to" value="{{to}}" required autocomplete="off" placeholder="2026-11-28T07:10:00Z" data-testid="undo-to"></p>
  <p><label for="undo-device">Made by</label>
    <select id="undo-device" name="device" data-testid="undo-device">
      <option value=""{{#everyDevice}} selected{{/everyDevice}}>Every device (the book as it was at that time)</option>
      {{#devices}}<option value="{{name}}"{{#selected}} selected{{/selected}}>{{name}}</option>{{/devices}}
    </select></p>
  <p><label><input type="checkbox" name="conflicts" value="include"{{#includeConflicts}} checked{{/includeConflicts}} data-testid="undo-include-conflicts"> Also undo cards another device changed since (conflicts)</label></p>
  <p><button type="submit" class="secondary" data-testid="undo-show-plan">Show what would change</button></p>
</form>
{{#plan}}
<section aria-labelledby="undo-plan-heading" class="card-section" data-testid="undo-plan">
  <h2 id="undo-plan-heading">What the undo would do</h2>
  <p data-testid="undo-summary">{{summary}}</p>
  {{#hasSteps}}
  <table class="table" tabindex="0" data-testid="undo-steps">
    <caption class="visually-hidden">Cards the undo changes</caption>
    <thead><tr><th scope="col">Contact</th><th scope="col">What happens</th></tr></thead>
    <tbody>{{#steps}}<tr data-testid="undo-step"><th scope="row">{{name}}</th><td>{{what}}</td></tr>{{/steps}}</tbody>
  </table>
  {{/hasSteps}}
  {{#hasConflicts}}
  <h3>Conflicts</h3>
  <p class="muted">{{#conflictsIncluded}}Changed since by another device: you asked to undo these too, over those changes.{{/conflictsIncluded}}{{^conflictsIncluded}}Changed since by another device: the undo does not overwrite these.{{/conflictsIncluded}}</p>
  <table class="table" tabindex="0" data-testid="undo-conflicts">
    <caption class="visually-hidden">Cards another device changed since</caption>
    <thead><tr><th scope="col">Contact</th><th scope="col">Changed since by</th></tr></thead>
    <tbody>{{#conflicts}}<tr data-testid="undo-conflict"><th scope="row">{{name}}</th><td>{{by}}</td></tr>{{/conflicts}}</tbody>
  </table>
  {{/hasConflicts}}
  {{#hasSteps}}
  <form method="post" action="{{action}}" class="inline" id="undo-confirm" data-testid="undo-confirm-form">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <input type="hidden" name="to" value="{{to}}">
    <input type="hidden" name="device" value="{{device}}">
    {{#conflictsIncluded}}<input type="hidden" name="conflicts" value="include">{{/conflictsIncluded}}
    <button type="submit" class="danger" data-testid="undo-confirm">Undo these changes</button>
  </form>
  {{/hasSteps}}
  {{^hasSteps}}<p data-testid="undo-nothing">Nothing to undo.</p>{{/hasSteps}}
</section>
{{/plan}}

"""##),
    ]
}

/// The stylesheet and the script, served hash-named (`StaticAssets`).
enum EmbeddedStatic {
    static let appCSS = ##"""
/* Rolo web UI: one stylesheet, light and dark, phone and desktop. No inline styles anywhere. */
:root {
  color-scheme: light dark;
  --bg: #ffffff;
  --bg-soft: #f4f5f7;
  --bg-pane: #fbfbfc;
  --fg: #1b1d21;
  --fg-muted: #555b66;
  --border: #d5d8de;
  --accent: #1d5fbf;
  --accent-fg: #ffffff;
  --accent-soft: #e3ecfa;
  --danger: #b3261e;
  --danger-fg: #ffffff;
  --focus: #0b57d0;
  --ok-bg: #e5f4ea;
  --ok-fg: #124d26;
  --error-bg: #fbe9e7;
  --error-fg: #8c1d18;
  --chart: #1d5fbf;
  --radius: 6px;
  --font: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #15171b;
    --bg-soft: #1f2227;
    --bg-pane: #1a1c20;
    --fg: #eceef1;
    --fg-muted: #b4bac4;
    --border: #3a3f47;
    --accent: #8ab4f8;
    --accent-fg: #0c1a30;
    --accent-soft: #23324a;
    --danger: #f2b8b5;
    --danger-fg: #410e0b;
    --focus: #a8c7fa;
    --ok-bg: #1d3526;
    --ok-fg: #b6e3c3;
    --error-bg: #3d1a17;
    --error-fg: #f9dedc;
    --chart: #8ab4f8;
  }
}
* { box-sizing: border-box; }
[hidden] { display: none !important; }
html, body { margin: 0; padding: 0; }
body {
  background: var(--bg);
  color: var(--fg);
  font: 15px/1.45 var(--font);
}
a { color: var(--accent); }
a:hover { text-decoration-thickness: 2px; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
h1 { font-size: 1.35rem; margin: 0 0 .5rem; }
h2 { font-size: 1.15rem; margin: 1rem 0 .5rem; }
h3 { font-size: 1rem; margin: 1rem 0 .4rem; }
code, .mono { font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
.visually-hidden {
  position: absolute !important; width: 1px; height: 1px; padding: 0; margin: -1px;
  overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0;
}
.skip-link {
  position: absolute; left: .5rem; top: -3rem; z-index: 10;
  background: var(--accent); color: var(--accent-fg); padding: .5rem .8rem; border-radius: var(--radius);
}
.skip-link:focus { top: .5rem; }
.muted { color: var(--fg-muted); }
.hint { display: block; color: var(--fg-muted); font-size: .85rem; }
.error { background: var(--error-bg); color: var(--error-fg); padding: .5rem .75rem; border-radius: var(--radius); }
.notice { background: var(--accent-soft); padding: .5rem .75rem; border-radius: var(--radius); }

/* Controls */
button, .button, input, select, textarea { font: inherit; color: inherit; }
input, select, textarea {
  background: var(--bg); border: 1px solid var(--border); border-radius: var(--radius);
  padding: .35rem .5rem; max-width: 100%;
}
input[type=checkbox], input[type=radio] { padding: 0; }
textarea { width: 100%; }
button, .button {
  display: inline-block; cursor: pointer; text-decoration: none;
  background: var(--accent); color: var(--accent-fg); border: 1px solid var(--accent);
  border-radius: var(--radius); padding: .35rem .8rem; line-height: 1.3;
}
.secondary, button.secondary, .button.secondary { background: var(--bg); color: var(--accent); border-color: var(--border); }
.danger, button.danger { background: var(--danger); color: var(--danger-fg); border-color: var(--danger); }
.link-button { background: none; border: none; color: var(--accent); padding: .2rem .3rem; text-decoration: underline; }
form.inline { display: inline; }
label { display: inline-block; }
.stack p label, .grid p > label, .grid p > .label { display: block; font-weight: 600; font-size: .9rem; margin-bottom: .15rem; }
fieldset { border: 1px solid var(--border); border-radius: var(--radius); margin: 0 0 1rem; padding: .5rem 1rem .75rem; }
legend { font-weight: 600; padding: 0 .3rem; }
.checks { list-style: none; padding: 0; margin: .3rem 0; }
.checks li { margin: .2rem 0; }
.checks .nested { margin-left: 1.5rem; }
.badge { display: inline-block; font-size: .75rem; background: var(--bg-soft); color: var(--fg-muted); border: 1px solid var(--border); border-radius: 999px; padding: 0 .45rem; }

/* Banner */
.banner {
  display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem;
  padding: .5rem 1rem; border-bottom: 1px solid var(--border); background: var(--bg-soft);
}
.brand { font-weight: 700; font-size: 1.1rem; text-decoration: none; color: var(--fg); }
.search { display: flex; gap: .4rem; flex: 1 1 18rem; max-width: 36rem; }
.search input { flex: 1; }
.account ul { display: flex; flex-wrap: wrap; gap: .2rem .6rem; list-style: none; margin: 0; padding: 0; align-items: center; }
.account a[aria-current] { font-weight: 700; }
.who { color: var(--fg-muted); }
.flash { margin: .5rem 1rem; padding: .5rem .75rem; border-radius: var(--radius); background: var(--ok-bg); color: var(--ok-fg); display: flex; gap: 1rem; align-items: center; }
.flash.error { background: var(--error-bg); color: var(--error-fg); }
.flash p { margin: 0; }

/* Three panes */
.app { display: grid; grid-template-columns: 14rem 1fr; min-height: calc(100vh - 3.2rem); }
.content { display: grid; grid-template-columns: minmax(16rem, 24rem) 1fr; align-items: start; min-width: 0; }
.content.single { display: block; padding: 1rem 1.5rem; max-width: 64rem; }
.sidebar { border-right: 1px solid var(--border); padding: .75rem 1rem; background: var(--bg-pane); }
.sidebar ul { list-style: none; margin: 0 0 1rem; padding: 0; }
.sidebar li { margin: .15rem 0; }
.sidebar a { text-decoration: none; display: inline-block; padding: .1rem .2rem; border-radius: 4px; }
.sidebar a[aria-current] { background: var(--accent-soft); font-weight: 700; color: var(--fg); }
.nav-heading { font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; color: var(--fg-muted); margin: .5rem 0 .3rem; }
.kind { color: var(--fg-muted); font-size: .8rem; }
.list-pane { border-right: 1px solid var(--border); padding: .75rem 0 0; display: flex; flex-direction: column; min-width: 0; min-height: 100%; }
.list-head { display: flex; flex-wrap: wrap; align-items: baseline; gap: .3rem 1rem; padding: 0 1rem; }
.list-head h1 { flex: 1 1 auto; }
.count { color: var(--fg-muted); margin: 0; }
.letters ul { display: flex; flex-wrap: wrap; list-style: none; gap: .1rem; padding: .3rem 1rem; margin: 0; }
.letters a { display: inline-block; min-width: 1.5rem; text-align: center; text-decoration: none; border-radius: 4px; padding: .05rem .15rem; font-size: .85rem; }
.letters a[aria-current] { background: var(--accent); color: var(--accent-fg); }
.rows { list-style: none; margin: 0; padding: 0; }
.row { display: flex; align-items: center; border-top: 1px solid var(--border); padding-left: .6rem; }
.row.current, .row.keyboard { background: var(--accent-soft); }
.row .select { margin: 0 .4rem 0 .2rem; }
.row-link { display: flex; align-items: center; gap: .6rem; flex: 1; min-width: 0; padding: .4rem .8rem .4rem .2rem; text-decoration: none; color: var(--fg); }
.row-text { display: flex; flex-direction: column; min-width: 0; }
.row-name, .row-sub { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.row-sub { color: var(--fg-muted); font-size: .85rem; }
.avatar { width: 40px; height: 40px; border-radius: 50%; flex: none; object-fit: cover; }
.initials { display: inline-flex; align-items: center; justify-content: center; background: var(--bg-soft); color: var(--fg-muted); font-weight: 700; border: 1px solid var(--border); }
.empty { padding: 1rem; color: var(--fg-muted); }
.selection-actions { padding: .5rem 1rem; margin: 0; }
.pager { display: flex; justify-content: space-between; padding: .5rem 1rem 1rem; }
.pager [rel=next] { margin-left: auto; }
.detail-pane { padding: .75rem 1.5rem 2rem; min-width: 0; }
.back-to-list { display: none; }

/* Contact */
.contact-head { display: flex; align-items: center; gap: 1rem; }
.contact-head h2 { font-size: 1.4rem; margin: 0; }
.subtitle { margin: .1rem 0 0; color: var(--fg-muted); }
.photo { width: 96px; height: 96px; border-radius: 50%; object-fit: cover; flex: none; font-size: 2rem; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; margin: 1rem 0; }
.fields { display: grid; grid-template-columns: minmax(6rem, 10rem) 1fr; gap: .35rem 1rem; margin: 1rem 0; }
.field { display: contents; }
.fields dt { color: var(--fg-muted); text-align: right; }
.fields dd { margin: 0; overflow-wrap: anywhere; }
.value { white-space: pre-line; }
.chips { list-style: none; display: flex; flex-wrap: wrap; gap: .4rem; padding: 0; }
.chips a { display: inline-block; border: 1px solid var(--border); border-radius: 999px; padding: .1rem .6rem; text-decoration: none; }

/* Editor */
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(12rem, 1fr)); gap: 0 1rem; }
.grid p, .value-row p { margin: .35rem 0; }
.grid .wide, .value-row .wide { grid-column: 1 / -1; }
.grid input:not([type=checkbox]):not([type=radio]):not([type=file]) { width: 100%; }
/* A labeled value: the label boxes and Remove on one line, the value on a line of its own
   at the row's full width (an address's parts at least 12rem each), so a value box is never
   narrower than a label box (at most 12rem) and a number or address is not cut off. */
.value-row { display: flex; flex-wrap: wrap; gap: 0 .75rem; align-items: flex-end; border-bottom: 1px dashed var(--border); padding-bottom: .4rem; }
.value-row .label-box { flex: 1 1 10rem; max-width: 12rem; }
.value-row .remove { flex: 0 0 auto; margin-left: auto; }
.value-row .value-box, .value-row .street { flex: 1 1 100%; }
.value-row .part { flex: 1 1 12rem; }
.value-row input:not([type=checkbox]), .value-row select, .value-row textarea { width: 100%; }
.value-row label { font-weight: 600; font-size: .9rem; display: block; margin-bottom: .15rem; }
.value-row .remove label { font-weight: normal; display: inline-block; }
.date { margin: .35rem 0; }
.date .label { font-weight: 600; font-size: .9rem; margin: 0 0 .15rem; }
.date-fields { display: flex; gap: .6rem; margin: 0; }
.date-fields label { display: block; font-size: .85rem; }
.date-fields input { width: 3.5rem; }
.date-fields #f-bday-year { width: 5rem; }
.placeholder { color: var(--fg-muted); }
.form-actions { display: flex; gap: .6rem; flex-wrap: wrap; }
.conflict { border: 2px solid var(--danger); border-radius: var(--radius); padding: .5rem 1rem; margin-bottom: 1rem; }
.versions { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; }

/* Pages */
.narrow { max-width: 26rem; margin: 3rem auto; padding: 0 1rem; }
.card-section { border: 1px solid var(--border); border-radius: var(--radius); padding: .25rem 1rem 1rem; margin: 0 0 1.25rem; }
.danger-zone { border-color: var(--danger); }
.table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; }
.table th, .table td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--border); vertical-align: top; }
.table thead th { font-size: .85rem; color: var(--fg-muted); }
.summary { display: flex; flex-wrap: wrap; gap: 1rem 2rem; }
.summary dt { color: var(--fg-muted); font-size: .85rem; }
.summary dd { margin: 0; font-size: 1.2rem; font-weight: 700; }
.share-list { padding-left: 1.1rem; }
.share-list li { margin: .4rem 0; }
.duplicate-groups { list-style: none; padding: 0; }
.duplicate-group { border: 1px solid var(--border); border-radius: var(--radius); padding: .5rem 1rem; margin-bottom: .75rem; }
.secret input { width: 100%; font-size: 1.05rem; }
.qr img { display: block; max-width: 100%; height: auto; }
figure.qr { margin: 1rem 0; }
.charts { display: flex; flex-wrap: wrap; gap: 1rem; }
.chart { margin: 0; }
.chart figcaption { font-size: .9rem; color: var(--fg-muted); }
.chart rect { fill: var(--chart); }
.chart .axis { stroke: var(--border); stroke-width: 1; }
dialog { border: 1px solid var(--border); border-radius: var(--radius); background: var(--bg); color: var(--fg); max-width: 32rem; }
dialog::backdrop { background: rgb(0 0 0 / .4); }
.shortcuts div { display: flex; gap: 1rem; margin: .25rem 0; }
.shortcuts dt { min-width: 9rem; }
.shortcuts dd { margin: 0; }
kbd { border: 1px solid var(--border); border-bottom-width: 2px; border-radius: 4px; padding: 0 .3rem; font: .85rem ui-monospace, monospace; background: var(--bg-soft); }

/* Phones: one column; the URL says which pane is shown. */
@media (max-width: 760px) {
  .app { display: block; }
  .sidebar { border-right: none; border-bottom: 1px solid var(--border); }
  .sidebar ul { display: flex; flex-wrap: wrap; gap: .2rem .8rem; margin-bottom: .4rem; }
  .app.has-detail .sidebar, .app.has-detail .list-pane > :not(.list-head),
  .app.has-detail .list-head > :not(h1) { display: none; }
  /* The list's h1 stays, unseen, as the page's heading (axe: page-has-heading-one). */
  .app.has-detail .list-pane, .app.has-detail .list-head { padding: 0; border: none; min-height: 0; }
  .app.has-detail .list-head h1 { position: absolute; width: 1px; height: 1px; overflow: hidden;
    clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap; margin: 0; }
  .content { display: block; }
  .list-pane { border-right: none; }
  .back-to-list { display: block; margin: 0 0 .5rem; }
  .detail-pane { padding: .75rem 1rem 2rem; }
  .fields { grid-template-columns: 1fr; }
  .fields dt { text-align: left; margin-top: .4rem; }
  .value-row .label-box { flex: 1 1 100%; max-width: none; }
  .value-row .part { flex: 1 1 100%; }
  .placeholder { display: none; }
  .versions { grid-template-columns: 1fr; }
  .search { flex-basis: 100%; max-width: none; }
  .content.single { padding: .75rem 1rem; }
  /* Wide tables scroll sideways; those without a control inside have tabindex=0 so the keyboard can scroll them. */
  .table { display: block; overflow-x: auto; position: relative; }
}

"""##

    static let appJS = ##"""
// Rolo web UI: progressive enhancement only. Every page works without this file.
// It fetches server-rendered HTML fragments (escaped on the server) and moves their nodes
// into the page; it never builds markup from strings. No dependencies.
'use strict';

(() => {
  const FRAGMENT_HEADERS = { 'X-Requested-With': 'fetch' };
  const MAX_ROWS = 1000;
  const PHOTO_MAX_BYTES = 256 * 1024;
  const PHOTO_MAX_SIDE = 512;
  const singleKeysKey = 'rolo.singleKeyShortcuts';

  const $ = (selector, root = document) => root.querySelector(selector);
  const $$ = (selector, root = document) => Array.from(root.querySelectorAll(selector));

  function singleKeysEnabled() {
    try { return localStorage.getItem(singleKeysKey) !== 'off'; } catch (e) { return true; }
  }

  function isTyping(target) {
    if (!target || !(target instanceof Element)) return false;
    const tag = target.tagName;
    return tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || target.isContentEditable;
  }

  async function fetchDocument(url, signal) {
    const response = await fetch(url, { headers: FRAGMENT_HEADERS, credentials: 'same-origin', signal });
    if (!response.ok) throw new Error('HTTP ' + response.status);
    const html = await response.text();
    // An inert document: nothing in it runs or loads.
    return new DOMParser().parseFromString(html, 'text/html');
  }

  function adopt(node) { return document.importNode(node, true); }

  function replaceFrom(fragment, selector) {
    const current = $(selector);
    const next = $(selector, fragment);
    if (current && next) current.replaceWith(adopt(next));
  }

  // --- The list: search as you type, infinite scroll ---------------------------------

  let searchController = null;
  let searchTimer = null;

  function applyListFragment(fragment) {
    replaceFrom(fragment, '#rows');
    replaceFrom(fragment, '.pager');
    replaceFrom(fragment, '.letters');
    const count = $('#result-count');
    const nextCount = $('#result-count', fragment);
    if (count && nextCount) count.textContent = nextCount.textContent;
    const heading = $('#list-heading');
    const nextHeading = $('#list-heading', fragment);
    if (heading && nextHeading) heading.textContent = nextHeading.textContent;
    observeNextPage();
  }

  function setupSearch() {
    const form = $('#search-form');
    const input = $('#q');
    if (!form || !input || !$('#rows')) return;
    input.addEventListener('input', () => {
      clearTimeout(searchTimer);
      // Short: the list must follow a keystroke within 100 ms, and a request in flight is
      // aborted by the next one, so a fast typist costs the server little.
      searchTimer = setTimeout(runSearch, 50);
    });
    function runSearch() {
      if (searchController) searchController.abort();
      searchController = new AbortController();
      const url = new URL(form.action, location.href);
      for (const [name, value] of new FormData(form)) {
        if (value !== '') url.searchParams.append(name, value);
      }
      fetchDocument(url, searchController.signal).then((fragment) => {
        applyListFragment(fragment);
        history.replaceState(null, '', url.pathname + url.search);
      }).catch((error) => {
        if (error.name !== 'AbortError') form.submit();
      });
    }
  }

  let pageObserver = null;
  let loadingPage = false;

  function observeNextPage() {
    if (!('IntersectionObserver' in window)) return;
    if (pageObserver) pageObserver.disconnect();
    const next = $('#next-page');
    const rows = $('#rows');
    if (!next || !rows || $$('.row', rows).length >= MAX_ROWS) return;
    pageObserver = new IntersectionObserver((entries) => {
      if (!entries.some((entry) => entry.isIntersecting) || loadingPage) return;
      loadingPage = true;
      fetchDocument(next.href).then((fragment) => {
        const list = $('#rows');
        for (const row of $$('#rows > .row', fragment)) list.appendChild(adopt(row));
        replaceFrom(fragment, '.pager');
        loadingPage = false;
        observeNextPage();
      }).catch(() => { loadingPage = false; });
    }, { rootMargin: '200px' });
    pageObserver.observe(next);
  }

  // --- Keyboard shortcuts -----------------------------------------------------------

  function rowLinks() { return $$('#rows .row-link'); }

  function moveSelection(step) {
    const links = rowLinks();
    if (links.length === 0) return;
    let index = links.indexOf(document.activeElement);
    if (index < 0) index = links.findIndex((link) => link.getAttribute('aria-current') === 'page');
    index = index < 0 ? (step > 0 ? 0 : links.length - 1) : Math.min(links.length - 1, Math.max(0, index + step));
    for (const row of $$('#rows .row.keyboard')) row.classList.remove('keyboard');
    const link = links[index];
    link.closest('.row').classList.add('keyboard');
    link.focus();
    link.scrollIntoView({ block: 'nearest' });
  }

  function openHelp() {
    const dialog = $('#help-dialog');
    if (dialog && typeof dialog.showModal === 'function' && !dialog.open) dialog.showModal();
  }

  function setupHelp() {
    const button = $('#help-button');
    const toggle = $('#single-key-shortcuts');
    if (button) {
      button.hidden = false;
      button.addEventListener('click', openHelp);
    }
    if (toggle) {
      toggle.checked = singleKeysEnabled();
      toggle.addEventListener('change', () => {
        try { localStorage.setItem(singleKeysKey, toggle.checked ? 'on' : 'off'); } catch (e) { /* private mode */ }
      });
    }
  }

  function setupKeys() {
    document.addEventListener('keydown', (event) => {
      if (event.defaultPrevented) return;
      const key = event.key;
      const form = $('#edit-form');
      if ((event.ctrlKey || event.metaKey) && !event.altKey && (key === 's' || key === 'S')) {
        if (form) {
          event.preventDefault();
          const save = $('#save-button');
          if (form.requestSubmit) form.requestSubmit(save || undefined); else form.submit();
        }
        return;
      }
      if (key === 'Escape') {
        const dialog = $('dialog[open]');
        if (dialog) return; // the dialog closes itself
        if (isTyping(event.target) && event.target.id === 'q') { event.target.blur(); return; }
        const cancel = $('#cancel-edit');
        if (cancel && !isTyping(event.target)) { location.href = cancel.href; return; }
        if (cancel && isTyping(event.target)) { event.target.blur(); }
        return;
      }
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      if (isTyping(event.target)) {
        if (event.target.id === 'q' && key === 'ArrowDown') { event.preventDefault(); moveSelection(1); }
        return;
      }
      if (key === 'ArrowDown' || key === 'ArrowUp') {
        if (!$('#rows')) return;
        event.preventDefault();
        moveSelection(key === 'ArrowDown' ? 1 : -1);
        return;
      }
      if (!singleKeysEnabled()) return;
      switch (key) {
        case '/': {
          const input = $('#q');
          if (input) { event.preventDefault(); input.focus(); input.select(); }
          break;
        }
        case 'j': moveSelection(1); break;
        case 'k': moveSelection(-1); break;
        case 'e': {
          const edit = $('#edit-contact');
          if (edit) location.href = edit.href;
          break;
        }
        case 'n': {
          const create = $('#new-contact');
          if (create) location.href = create.href;
          break;
        }
        case '?': openHelp(); break;
        default: break;
      }
    });
  }

  // --- The editor: unsaved changes, photo resizing --------------------------------

  function setupEditor() {
    const form = $('#edit-form');
    if (!form) return;
    let dirty = false;
    let submitting = false;
    form.addEventListener('input', () => { dirty = true; });
    form.addEventListener('submit', () => { submitting = true; });
    window.addEventListener('beforeunload', (event) => {
      if (dirty && !submitting) { event.preventDefault(); event.returnValue = ''; }
    });
    const photo = $('#f-photo');
    if (photo) photo.addEventListener('change', () => resizePhoto(photo));
  }

  function resizePhoto(input) {
    const file = input.files && input.files[0];
    if (!file || !file.type.startsWith('image/') || typeof DataTransfer === 'undefined') return;
    const url = URL.createObjectURL(file);
    const image = new Image();
    image.onload = () => {
      const scale = Math.min(1, PHOTO_MAX_SIDE / Math.max(image.naturalWidth, image.naturalHeight));
      if (scale === 1 && file.size <= PHOTO_MAX_BYTES && /^image\/(jpeg|png|gif|webp)$/.test(file.type)) {
        URL.revokeObjectURL(url);
        return;
      }
      const canvas = document.createElement('canvas');
      canvas.width = Math.max(1, Math.round(image.naturalWidth * scale));
      canvas.height = Math.max(1, Math.round(image.naturalHeight * scale));
      canvas.getContext('2d').drawImage(image, 0, 0, canvas.width, canvas.height);
      URL.revokeObjectURL(url);
      const encode = (quality) => canvas.toBlob((blob) => {
        if (!blob) return;
        if (blob.size > PHOTO_MAX_BYTES && quality > 0.4) { encode(quality - 0.15); return; }
        const transfer = new DataTransfer();
        transfer.items.add(new File([blob], 'photo.jpg', { type: 'image/jpeg' }));
        input.files = transfer.files;
      }, 'image/jpeg', quality);
      encode(0.85);
    };
    image.onerror = () => URL.revokeObjectURL(url);
    image.src = url;
  }

  // --- Import: upload progress -------------------------------------------------------

  function setupImport() {
    const form = $('#import-form');
    const progress = $('#import-progress');
    if (!form || !progress || typeof XMLHttpRequest === 'undefined') return;
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const request = new XMLHttpRequest();
      request.open('POST', form.action);
      request.setRequestHeader('X-Requested-With', 'fetch');
      progress.hidden = false;
      request.upload.addEventListener('progress', (update) => {
        if (update.lengthComputable) {
          progress.value = Math.round(update.loaded / update.total * 100);
          progress.textContent = progress.value + '%';
        }
      });
      request.addEventListener('load', () => {
        const fragment = new DOMParser().parseFromString(request.responseText, 'text/html');
        const main = $('#main');
        const next = $('#main', fragment);
        if (main && next) {
          main.replaceWith(adopt(next));
          $('#main').focus();
          setupImport();
        }
      });
      request.addEventListener('error', () => { progress.hidden = true; form.submit(); });
      request.send(new FormData(form));
    });
  }

  function start() {
    setupSearch();
    observeNextPage();
    setupHelp();
    setupKeys();
    setupEditor();
    setupImport();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start); else start();
})();

"""##
}
