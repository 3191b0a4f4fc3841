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
