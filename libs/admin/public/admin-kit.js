// Shared by the admin page's scripts (loaded first): DOM building, the API call and the
// status line. Every value from the API is inserted as text, never as HTML.
(function () {
  'use strict';

  var TOKEN_KEY = 'relaygram-admin-token';
  var API = '/admin/api';
  /** The outbox's internal route (@relaygram/contracts OUTBOX_ROUTE); every install has it. */
  var OUTBOX_ROUTE = '_outbox';

  var kit;

  function $(id) {
    return document.getElementById(id);
  }

  /** el('div', { class: 'card' }, 'text', child) — children are text or nodes, never HTML. */
  function el(tag, attrs) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) {
      var value = attrs[name];
      if (value === undefined || value === null || value === false) return;
      if (name === 'onclick') node.addEventListener('click', value);
      else node.setAttribute(name, value === true ? '' : String(value));
    });
    for (var i = 2; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === undefined || child === null || child === false) continue;
      node.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function token() {
    return sessionStorage.getItem(TOKEN_KEY);
  }

  function say(text, isError) {
    var status = $('status');
    status.textContent = text || '';
    status.className = isError ? 'error' : '';
  }

  function ApiError(status, message) {
    this.status = status;
    this.message = message;
  }

  function api(method, path, body) {
    var init = { method: method, headers: { Authorization: 'Bearer ' + token() } };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    return fetch(API + path, init).then(function (res) {
      return res.text().then(function (text) {
        var data = null;
        try {
          data = text ? JSON.parse(text) : null;
        } catch (e) {
          data = null;
        }
        if (res.status === 401) {
          kit.onUnauthorized('The admin token was refused. Sign in again.');
          throw new ApiError(401, 'unauthorized');
        }
        if (!res.ok) throw new ApiError(res.status, (data && data.error) || res.statusText);
        return data;
      });
    });
  }

  function fail(error) {
    if (error instanceof ApiError && error.status === 401) return;
    say((error && error.message) || String(error), true);
  }

  function badge(ok, yes, no) {
    return el('span', { class: 'badge ' + (ok ? 'ok' : 'bad') }, ok ? yes : no);
  }

  function fields(pairs) {
    var dl = el('dl');
    pairs.forEach(function (pair) {
      if (pair[1] === undefined || pair[1] === null || pair[1] === '') return;
      dl.appendChild(el('dt', null, pair[0]));
      dl.appendChild(el('dd', null, pair[1]));
    });
    return dl;
  }

  function replaceChildren(container, nodes, emptyText) {
    container.textContent = '';
    if (!nodes.length) container.appendChild(el('p', { class: 'empty' }, emptyText));
    nodes.forEach(function (node) {
      container.appendChild(node);
    });
  }

  function when(iso) {
    if (!iso) return null;
    var date = typeof iso === 'number' ? new Date(iso * 1000) : new Date(iso);
    return date.toLocaleString();
  }

  kit = {
    TOKEN_KEY: TOKEN_KEY,
    OUTBOX_ROUTE: OUTBOX_ROUTE,
    $: $,
    el: el,
    token: token,
    say: say,
    api: api,
    fail: fail,
    badge: badge,
    fields: fields,
    replaceChildren: replaceChildren,
    when: when,
    /** Set by the page: what a refused token does (sign out and ask again). */
    onUnauthorized: function () {},
  };
  window.RelaygramAdmin = kit;
})();
