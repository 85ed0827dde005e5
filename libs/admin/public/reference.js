// The API reference: both documents of this process, served by this listener. The admin
// token is entered with Swagger UI's Authorize button and kept in this page only.
(function () {
  'use strict';
  window.addEventListener('DOMContentLoaded', function () {
    window.SwaggerUIBundle({
      dom_id: '#reference',
      urls: [
        { url: '/admin/openapi.json', name: 'management (this listener)' },
        { url: '/api/v1/openapi.json', name: 'public' },
      ],
      presets: [window.SwaggerUIBundle.presets.apis, window.SwaggerUIStandalonePreset],
      layout: 'StandaloneLayout',
      // No call leaves this origin: no online validator badge.
      validatorUrl: null,
      deepLinking: true,
    });
  });
})();
