using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading.Tasks;
using Acme.Billing.Storage;

namespace Acme.Billing
{
    public enum InvoiceState
    {
        Draft,
        Sent,
        Paid,
    }

    /// <summary>Where invoices are kept.</summary>
    public interface IInvoiceRepository
    {
        Task<Invoice?> FindAsync(Guid id);
        Task SaveAsync(Invoice invoice);
    }

    public record Invoice(Guid Id, string Customer, IReadOnlyList<Money> Lines)
    {
        public InvoiceState State { get; init; } = InvoiceState.Draft;
    }

    /// <summary>
    /// Creates, totals and sends invoices.
    /// </summary>
    public sealed class InvoiceService
    {
        private readonly IInvoiceRepository _repository;
        private readonly Func<DateTime> _clock;

        public event EventHandler<Guid>? Sent;

        public InvoiceService(IInvoiceRepository repository, Func<DateTime>? clock = null)
        {
            _repository = repository ?? throw new ArgumentNullException(nameof(repository));
            _clock = clock ?? (() => DateTime.UtcNow);
        }

        public int Count { get; private set; }

        /// <summary>The sum of the lines; all must share a currency.</summary>
        public static Money Total(Invoice invoice)
        {
            var currency = invoice.Lines.FirstOrDefault().Currency ?? "EUR";
            return invoice.Lines.Aggregate(Money.Zero(currency), (sum, m) => sum.Add(m));
        }

        public async Task<bool> SendAsync(Guid id)
        {
            var invoice = await _repository.FindAsync(id);
            if (invoice is null || invoice.State != InvoiceState.Draft)
            {
                return false;
            }

            bool IsEmpty(Invoice i) => i.Lines.Count == 0;

            if (IsEmpty(invoice))
            {
                throw new InvalidOperationException($"invoice {id} has no lines");
            }
            await _repository.SaveAsync(invoice with { State = InvoiceState.Sent });
            Count++;
            Sent?.Invoke(this, id);
            return true;
        }
    }
}
