// The Relaygram admin page: plain DOM code, no build step, no dependencies. Every value
// from the API is inserted as text (dead letters hold whatever Telegram users sent).
(function () {
  'use strict';

  var TOKEN_KEY = 'relaygram-admin-token';
  var API = '/admin/api';
  var TABS = ['bots', 'routes', 'queue'];

  var state = { tab: 'bots', cursor: null, filter: {} };

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
          signOut('The admin token was refused. Sign in again.');
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

  // ---- sign in / out ----

  function showLogin(message) {
    $('app').hidden = true;
    $('sign-out').hidden = true;
    $('login').hidden = false;
    $('token').value = '';
    $('token').focus();
    say(message || '', Boolean(message));
  }

  function signOut(message) {
    sessionStorage.removeItem(TOKEN_KEY);
    showLogin(message);
  }

  function start() {
    return api('GET', '')
      .then(function (overview) {
        $('service').textContent = overview.service;
        fillSelect($('filter-route'), overview.routes);
        fillSelect($('filter-bot'), overview.bots);
        fillSelect($('filter-reason'), overview.dead_reasons);
        $('login').hidden = true;
        $('app').hidden = false;
        $('sign-out').hidden = false;
        say('');
        showTab(tabFromHash());
      })
      .catch(fail);
  }

  function fillSelect(select, values) {
    while (select.options.length > 1) select.remove(1);
    values.forEach(function (value) {
      select.appendChild(el('option', { value: value }, value));
    });
  }

  // ---- tabs ----

  function tabFromHash() {
    var name = location.hash.replace('#', '');
    return TABS.indexOf(name) >= 0 ? name : 'bots';
  }

  function showTab(name) {
    state.tab = name;
    TABS.forEach(function (tab) {
      $('tab-' + tab).setAttribute('aria-selected', String(tab === name));
      $('view-' + tab).hidden = tab !== name;
    });
    if (location.hash !== '#' + name) history.replaceState(null, '', '#' + name);
    load();
  }

  function load() {
    if (state.tab === 'bots') return loadBots();
    if (state.tab === 'routes') return loadRoutes();
    return loadLetters(true);
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

  // ---- bots ----

  function loadBots() {
    say('Loading bots…');
    return api('GET', '/bots')
      .then(function (data) {
        replaceChildren($('bots'), data.bots.map(botCard), 'No bots are configured.');
        say('');
      })
      .catch(fail);
  }

  function botCard(bot) {
    var webhook = bot.webhook || {};
    var out = el('pre', { hidden: true });
    var card = el(
      'article',
      { class: 'card bot', 'data-id': bot.id },
      el(
        'h3',
        null,
        bot.id,
        badge(bot.healthy, 'healthy', 'unhealthy'),
        el('span', { class: 'badge warn' }, bot.mode),
      ),
      bot.problem ? el('p', { class: 'problem' }, bot.problem) : null,
      fields([
        ['polling', bot.mode === 'polling' ? (bot.polling ? 'yes' : 'no') : null],
        ['state', bot.state],
        ['queued', bot.queue],
        ['dead letters', bot.dead],
        ['username', bot.username ? '@' + bot.username : null],
        ['webhook url', webhook.url],
        ['expected url', webhook.expected_url],
        ['pending at Telegram', webhook.pending_update_count],
        ['last webhook error', webhook.last_error_message],
        ['last error at', webhook.last_error_date ? when(webhook.last_error_date) : null],
        ['poller lease', bot.poller ? (bot.poller.leased ? 'held' : 'free') : null],
        ['offset', bot.poller ? bot.poller.offset : null],
      ]),
      bot.outbound ? outboundSection(bot.outbound) : null,
      bot.pull_routes && bot.pull_routes.length ? pullSection(bot.pull_routes) : null,
    );
    var actions = el(
      'div',
      { class: 'actions' },
      el(
        'button',
        {
          type: 'button',
          class: 'secondary',
          onclick: function () {
            webhookCall('GET', bot.id, out);
          },
        },
        'Webhook info',
      ),
    );
    if (bot.mode === 'webhook') {
      actions.appendChild(
        el(
          'button',
          {
            type: 'button',
            onclick: function () {
              if (confirm('Call setWebhook for ' + bot.id + ' with the configured URL and secret?'))
                webhookCall('POST', bot.id, out);
            },
          },
          'Set webhook',
        ),
      );
    }
    card.appendChild(actions);
    card.appendChild(out);
    return card;
  }

  // The bot's send budgets and the pauses Telegram's 429s set.
  function outboundSection(outbound) {
    var pacing = outbound.pacing;
    var section = el(
      'section',
      { class: 'outbound' },
      el(
        'h4',
        null,
        'Outbound pacing',
        el(
          'span',
          { class: 'badge ' + (pacing === 'shared' ? 'ok' : pacing === 'off' ? 'warn' : 'bad') },
          pacing,
        ),
      ),
      fields([
        ['per bot', outbound.per_second + ' / s'],
        ['per chat', outbound.per_chat_per_second + ' / s, burst ' + outbound.chat_burst],
        ['per group', outbound.per_group_per_minute + ' / min'],
        ['longest wait', outbound.max_wait_ms / 1000 + ' s'],
        ['broadcast share', outbound.broadcast_share + ' (reserved)'],
        [
          'bot paused',
          outbound.pause
            ? 'until ' + when(outbound.pause.until) + ' (' + outbound.pause.retry_after + ' s)'
            : 'no',
        ],
        ['chats paused', outbound.paused_chats_total],
      ]),
    );
    if (outbound.paused_chats.length) {
      var list = el('ul', { class: 'paused-chats' });
      outbound.paused_chats.forEach(function (chat) {
        list.appendChild(
          el(
            'li',
            null,
            'chat ' + chat.chat + ': ' + chat.retry_after + ' s, until ' + when(chat.until),
          ),
        );
      });
      section.appendChild(list);
    }
    return section;
  }

  // Long-polling bots behind pull routes: what waits for them, and whether they still poll.
  function pullSection(routes) {
    var list = el('ul', { class: 'paused-chats' });
    routes.forEach(function (route) {
      list.appendChild(
        el(
          'li',
          { 'data-route': route.route },
          route.route +
            ' (client ' +
            route.client +
            '): ' +
            (route.pending === null ? '?' : route.pending) +
            ' pending, last polled ' +
            (route.last_polled_at ? when(route.last_polled_at) : 'never') +
            ' ',
          badge(!route.stale, 'ok', 'stale'),
        ),
      );
    });
    return el('section', { class: 'outbound pull-routes' }, el('h4', null, 'Pull routes'), list);
  }

  function webhookCall(method, id, out) {
    say(method === 'POST' ? 'Setting the webhook…' : 'Asking Telegram…');
    return api(method, '/bots/' + encodeURIComponent(id) + '/webhook')
      .then(function (info) {
        out.hidden = false;
        out.textContent = JSON.stringify(info, null, 2);
        say(method === 'POST' ? 'Webhook set for ' + id + '.' : '');
      })
      .catch(fail);
  }

  // ---- routes ----

  function loadRoutes() {
    say('Loading routes…');
    return api('GET', '/routes')
      .then(function (data) {
        replaceChildren($('routes'), data.routes.map(routeCard), 'No routes are configured.');
        say('');
      })
      .catch(fail);
  }

  function routeCard(route) {
    return el(
      'article',
      { class: 'card route', 'data-name': route.name },
      el(
        'h3',
        null,
        route.name,
        el('span', { class: 'badge ' + (route.dead ? 'bad' : 'ok') }, route.dead + ' dead'),
      ),
      route.last_error ? el('p', { class: 'problem' }, 'Last error: ' + route.last_error) : null,
      fields([
        ['target', route.target],
        ['bots', route.bots.join(', ')],
        ['ordering', route.ordering],
        ['queued', route.queue],
        ['lanes', route.lanes],
        ['delivered', route.delivered],
        ['dead letters', route.dead],
        ['went dead (total)', route.dead_total],
        ['last status', route.last_status],
        ['last error at', when(route.last_error_at)],
      ]),
    );
  }

  // ---- dead letters ----

  function readFilter() {
    var filter = {};
    ['route', 'bot', 'reason'].forEach(function (name) {
      var value = $('filter-' + name).value;
      if (value) filter[name] = value;
    });
    return filter;
  }

  function query(params) {
    var parts = Object.keys(params)
      .filter(function (k) {
        return params[k] !== undefined && params[k] !== null && params[k] !== '';
      })
      .map(function (k) {
        return encodeURIComponent(k) + '=' + encodeURIComponent(params[k]);
      });
    return parts.length ? '?' + parts.join('&') : '';
  }

  function loadLetters(fresh) {
    if (fresh) {
      state.filter = readFilter();
      state.cursor = null;
    }
    var params = Object.assign({ limit: 50, cursor: state.cursor }, state.filter);
    say('Loading dead letters…');
    return api('GET', '/dead-letters' + query(params))
      .then(function (page) {
        var list = $('letters');
        var cards = page.items.map(letterCard);
        if (fresh) replaceChildren(list, cards, 'No dead letters match.');
        else
          cards.forEach(function (card) {
            list.appendChild(card);
          });
        state.cursor = page.next_cursor;
        $('more').hidden = !page.next_cursor;
        $('resend-all').disabled = !(state.filter.route || state.filter.bot);
        say('');
      })
      .catch(fail);
  }

  function letterCard(letter) {
    var card = el(
      'article',
      { class: 'card letter', 'data-id': letter.delivery_id },
      el(
        'h3',
        null,
        letter.route,
        el('span', { class: 'badge bad' }, letter.reason),
        el('span', { class: 'muted' }, letter.bot),
      ),
      fields([
        ['update', letter.update_id + (letter.update_type ? ' (' + letter.update_type + ')' : '')],
        ['attempts', letter.attempts],
        ['last status', letter.last_status],
        ['last error', letter.last_error],
        ['went dead', when(letter.dead_at)],
        ['accepted', when(letter.accepted_at)],
        ['delivery id', letter.delivery_id],
      ]),
      letter.last_body
        ? el('details', null, el('summary', null, 'Last answer'), el('pre', null, letter.last_body))
        : null,
      el(
        'details',
        null,
        el('summary', null, 'Update'),
        el('pre', null, JSON.stringify(letter.update, null, 2)),
      ),
    );
    var actions = el(
      'div',
      { class: 'actions' },
      el(
        'button',
        {
          type: 'button',
          class: 'resend',
          onclick: function (event) {
            act(
              event.target,
              'POST',
              '/dead-letters/' + encodeURIComponent(letter.delivery_id) + '/replay',
              card,
              'Re-sent',
            );
          },
        },
        'Re-send',
      ),
      el(
        'button',
        {
          type: 'button',
          class: 'danger delete',
          onclick: function (event) {
            if (confirm('Delete this dead letter? It cannot be re-sent afterwards.'))
              act(
                event.target,
                'DELETE',
                '/dead-letters/' + encodeURIComponent(letter.delivery_id),
                card,
                'Deleted',
              );
          },
        },
        'Delete',
      ),
    );
    card.appendChild(actions);
    return card;
  }

  function act(button, method, path, card, done) {
    button.disabled = true;
    return api(method, path)
      .then(function () {
        var message = done + ' ' + card.getAttribute('data-id') + '.';
        card.remove();
        if ($('letters').children.length) return say(message);
        // The page is empty now: load the next one, then tell what was done.
        return loadLetters(true).then(function () {
          say(message);
        });
      })
      .catch(function (error) {
        button.disabled = false;
        fail(error);
      });
  }

  function resendAll() {
    var filter = state.filter;
    if (!filter.route && !filter.bot) return say('Choose a route or a bot first.', true);
    var what = Object.keys(filter)
      .map(function (k) {
        return k + ' ' + filter[k];
      })
      .join(', ');
    if (!confirm('Re-send every dead letter of ' + what + '?')) return;
    say('Re-sending…');
    return api('POST', '/dead-letters/replay', filter)
      .then(function (result) {
        say(
          'Re-sent ' +
            result.queued +
            (result.failed ? ', ' + result.failed + ' could not be re-sent' : '') +
            '.',
        );
        return loadLetters(true);
      })
      .catch(fail);
  }

  // ---- wiring ----

  document.addEventListener('DOMContentLoaded', function () {
    $('login-form').addEventListener('submit', function (event) {
      event.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, $('token').value.trim());
      $('token').value = '';
      start();
    });
    $('sign-out').addEventListener('click', function () {
      signOut('Signed out.');
    });
    TABS.forEach(function (tab) {
      $('tab-' + tab).addEventListener('click', function () {
        showTab(tab);
      });
    });
    $('refresh').addEventListener('click', load);
    $('filters').addEventListener('submit', function (event) {
      event.preventDefault();
      loadLetters(true);
    });
    $('resend-all').addEventListener('click', resendAll);
    $('more').addEventListener('click', function () {
      loadLetters(false);
    });
    window.addEventListener('hashchange', function () {
      if (!$('app').hidden) showTab(tabFromHash());
    });
    if (token()) start();
    else showLogin();
  });
})();
